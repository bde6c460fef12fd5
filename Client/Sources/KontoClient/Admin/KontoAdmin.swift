import Foundation
import KontoModel
import OpenAPIRuntime

/// An operator key as listed (never its secret).
public struct KontoOperatorKey: Sendable, Equatable {
    public var id: String
    public var name: String
    /// `accounts:read`, `keys:write` … (docs/ADMIN.md, "Scopes").
    public var scopes: [String]
    public var createdAt: Date
    public var createdBy: String?
    public var expiresAt: Date?
    public var lastUsedAt: Date?
    public var revokedAt: Date?
}

/// An account search's filters (each optional; every one given must hold) and its page.
public struct KontoAccountQuery: Sendable, Equatable {
    public var userIdPrefix: String?
    public var userIdContains: String?
    public var verified: Bool?
    public var disabled: Bool?
    public var anonymous: Bool?
    public var createdAfter: Date?
    public var createdBefore: Date?
    public var hasSecondFactor: Bool?
    public var provider: String?
    public var cursor: String?
    public var limit: Int?

    public init(
        userIdPrefix: String? = nil, userIdContains: String? = nil, verified: Bool? = nil, disabled: Bool? = nil, anonymous: Bool? = nil, createdAfter: Date? = nil,
        createdBefore: Date? = nil, hasSecondFactor: Bool? = nil, provider: String? = nil, cursor: String? = nil, limit: Int? = nil
    ) {
        self.userIdPrefix = userIdPrefix
        self.userIdContains = userIdContains
        self.verified = verified
        self.disabled = disabled
        self.anonymous = anonymous
        self.createdAfter = createdAfter
        self.createdBefore = createdBefore
        self.hasSecondFactor = hasSecondFactor
        self.provider = provider
        self.cursor = cursor
        self.limit = limit
    }
}

public struct KontoAccountSummary: Sendable, Equatable, Encodable {
    public var accountId: String
    public var userId: String?
    public var anonymous: Bool
    public var verified: Bool
    public var disabled: Bool
    public var createdAt: Date
}

public struct KontoAccountPage: Sendable, Equatable {
    public var accounts: [KontoAccountSummary]
    /// The next page's cursor (``KontoAccountQuery/cursor``); nil on the last.
    public var nextCursor: String?
    public var totalEstimate: Int
    public var totalIsExact: Bool
}

/// One live session of an account, as an operator sees it (never its token).
public struct KontoAdminSession: Sendable, Equatable, Encodable {
    public var id: String
    public var createdAt: Date
    public var idleExpiresAt: Date
    public var absoluteExpiresAt: Date
    public var assuranceLevel: Int
    public var privilegedUntil: Date?
}

/// An account as an operator sees it: the account as every answer assembles it, and Identity's metadata.
public struct KontoAdminAccount: Sendable, Equatable {
    public struct Factor: Sendable, Equatable, Encodable {
        public var id: String
        public var kind: String
        public var name: String?
        public var createdAt: Date
    }

    public struct LinkedIdentity: Sendable, Equatable, Encodable {
        public var id: String
        public var provider: String
        public var createdAt: Date
        public var lastUsedAt: Date?
    }

    public var account: AssembledAccount
    public var createdAt: Date
    public var hasPassword: Bool
    public var disabledAt: Date?
    public var lastSignInAt: Date?
    public var verifiedAt: Date?
    public var factors: [Factor]
    public var identities: [LinkedIdentity]
    public var sessionCount: Int
}

/// The admin API from Swift (docs/ADMIN.md): a gateway's admin listener and an operator key, presented on every call.
/// Refusals are ``KontoClientError``s with the API's codes (`admin.keyRefused`, `admin.scopeMissing` …).
public struct KontoAdmin: Sendable {
    let client: KontoClient
    let key: String

    /// Over URLSession.
    /// - Parameters:
    ///   - adminURL: the gateway's admin listener (`KONTO_GATEWAY_ADMIN_PORT`), e.g. `http://127.0.0.1:8081`.
    ///   - key: an operator key (`kop_…`).
    public init(adminURL: String, key: String, timeout: Duration = .seconds(30)) {
        self.init(adminURL: adminURL, key: key, transport: KontoClient.urlSessionTransport(timeout: timeout))
    }

    /// Over `transport`.
    public init(adminURL: String, key: String, transport: any ClientTransport) {
        self.client = KontoClient(gatewayURL: adminURL, transport: transport)
        self.key = key
    }

    public func keys() async throws -> [KontoOperatorKey] {
        switch try await client.call(token: key, { try await $0.adminListKeys() }) {
        case .ok(let ok): return try ok.body.json.keys.map(Self.key)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Makes a key with scopes among this key's; its secret is answered this once.
    public func createKey(name: String, scopes: [String], expiresAt: Date? = nil) async throws -> (key: KontoOperatorKey, secret: String) {
        let wanted = try scopes.map { scope in
            guard let known = Components.Schemas.OperatorScope(rawValue: scope) else {
                throw KontoClientError(code: "client.usage", status: 0, detail: "'\(scope)' is not a scope.")
            }
            return known
        }
        let body = Components.Schemas.OperatorKeyRequest(name: name, scopes: wanted, expiresAt: expiresAt)
        switch try await client.call(token: key, { try await $0.adminCreateKey(body: .json(body)) }) {
        case .created(let created):
            let made = try created.body.json
            return (Self.key(made.key), made.secret)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    public func revokeKey(_ id: String) async throws {
        switch try await client.call(token: key, { try await $0.adminRevokeKey(path: .init(keyId: id)) }) {
        case .noContent: return
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    public func searchAccounts(_ query: KontoAccountQuery) async throws -> KontoAccountPage {
        let input = Operations.AdminSearchAccounts.Input.Query(
            userIdPrefix: query.userIdPrefix, userIdContains: query.userIdContains, verified: query.verified, disabled: query.disabled, anonymous: query.anonymous,
            createdAfter: query.createdAfter, createdBefore: query.createdBefore, hasSecondFactor: query.hasSecondFactor, provider: query.provider,
            cursor: query.cursor, limit: query.limit
        )
        switch try await client.call(token: key, { try await $0.adminSearchAccounts(query: input) }) {
        case .ok(let ok):
            let page = try ok.body.json
            return KontoAccountPage(
                accounts: page.accounts.map {
                    KontoAccountSummary(accountId: $0.accountId, userId: $0.userId, anonymous: $0.anonymous, verified: $0.verified, disabled: $0.disabled, createdAt: $0.createdAt)
                },
                nextCursor: page.nextCursor, totalEstimate: page.totalEstimate, totalIsExact: page.totalIsExact
            )
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    public func account(_ accountId: String) async throws -> KontoAdminAccount {
        switch try await client.call(token: key, { try await $0.adminGetAccount(path: .init(accountId: accountId)) }) {
        case .ok(let ok): return Self.account(try ok.body.json)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Disables the account: its sessions end, no sign-in succeeds until it is enabled (docs/ADMIN.md).
    public func disableAccount(_ accountId: String) async throws {
        switch try await client.call(token: key, { try await $0.adminDisableAccount(path: .init(accountId: accountId)) }) {
        case .noContent: return
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Deletes the account by its owner's deletion path: its sessions end, its data is erased (docs/ADMIN.md).
    public func deleteAccount(_ accountId: String) async throws {
        switch try await client.call(token: key, { try await $0.adminDeleteAccount(path: .init(accountId: accountId)) }) {
        case .noContent: return
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Mails the account's owner a password reset link (docs/ADMIN.md).
    public func sendPasswordReset(_ accountId: String) async throws {
        switch try await client.call(token: key, { try await $0.adminSendPasswordReset(path: .init(accountId: accountId)) }) {
        case .accepted: return
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Unlinks one of the account's provider identities, never its last way in (docs/ADMIN.md).
    public func unlinkIdentity(_ identityId: String, of accountId: String) async throws {
        switch try await client.call(token: key, { try await $0.adminUnlinkIdentity(path: .init(accountId: accountId, identityId: identityId)) }) {
        case .noContent: return
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Removes one of the account's second factors; its owner is mailed (docs/ADMIN.md).
    public func removeFactor(_ factorId: String, of accountId: String) async throws {
        switch try await client.call(token: key, { try await $0.adminRemoveFactor(path: .init(accountId: accountId, factorId: factorId)) }) {
        case .noContent: return
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    public func enableAccount(_ accountId: String) async throws {
        switch try await client.call(token: key, { try await $0.adminEnableAccount(path: .init(accountId: accountId)) }) {
        case .noContent: return
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// The account's live sessions, oldest first (never a token).
    public func sessions(of accountId: String) async throws -> [KontoAdminSession] {
        switch try await client.call(token: key, { try await $0.adminListSessions(path: .init(accountId: accountId)) }) {
        case .ok(let ok):
            return try ok.body.json.sessions.map {
                KontoAdminSession(
                    id: $0.id, createdAt: $0.createdAt, idleExpiresAt: $0.idleExpiresAt, absoluteExpiresAt: $0.absoluteExpiresAt,
                    assuranceLevel: $0.assuranceLevel, privilegedUntil: $0.privilegedUntil
                )
            }
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Ends every session of the account; answers how many ended.
    @discardableResult
    public func endSessions(of accountId: String) async throws -> Int {
        switch try await client.call(token: key, { try await $0.adminEndSessions(path: .init(accountId: accountId)) }) {
        case .ok(let ok): return try ok.body.json.sessionsEnded
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Ends one session of the account.
    public func endSession(_ sessionId: String, of accountId: String) async throws {
        switch try await client.call(token: key, { try await $0.adminEndSession(path: .init(accountId: accountId, sessionId: sessionId)) }) {
        case .noContent: return
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    static func account(_ answer: Components.Schemas.AdminAccount) -> KontoAdminAccount {
        let record = answer.credentials
        return KontoAdminAccount(
            account: answer.account, createdAt: record.createdAt, hasPassword: record.hasPassword, disabledAt: record.disabledAt, lastSignInAt: record.lastSignInAt,
            verifiedAt: record.verifiedAt,
            factors: record.factors.map { .init(id: $0.id, kind: $0.kind, name: $0.name, createdAt: $0.createdAt) },
            identities: record.identities.map { .init(id: $0.id, provider: $0.provider, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt) },
            sessionCount: record.sessionCount
        )
    }

    static func key(_ key: Components.Schemas.OperatorKey) -> KontoOperatorKey {
        KontoOperatorKey(
            id: key.id, name: key.name, scopes: key.scopes.map(\.rawValue), createdAt: key.createdAt, createdBy: key.createdBy,
            expiresAt: key.expiresAt, lastUsedAt: key.lastUsedAt, revokedAt: key.revokedAt
        )
    }
}
