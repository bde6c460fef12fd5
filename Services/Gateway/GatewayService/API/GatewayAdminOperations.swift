import Foundation
import HTTPTypes
import KontoContracts
import KontoModel
import OpenAPIRuntime

/// The admin API's operations for a caller in the same process (the admin console, in GatewayConsole): each goes
/// through the very handler the admin listener serves, with the operator key the caller holds, so the console and
/// the API cannot disagree: the same scopes, the same audit entries, the same refusals (``GatewayProblem``). The
/// generated HTTP shapes stay inside this target; the console sees the plain values below.
package struct GatewayAdminOperations: Sendable {
    let api: GatewayAPI

    /// One named value of an account's details or an audit entry's facts, in the order shown.
    package struct Entry: Sendable, Equatable {
        package var key: String
        package var value: String
    }

    /// Who a key is: its id, name and scopes.
    package struct Operator: Sendable, Equatable {
        package var keyId: String
        package var name: String
        package var scopes: [String]
    }

    package struct AccountRow: Sendable, Equatable {
        package var accountId: String
        package var userId: String?
        package var anonymous: Bool
        package var verified: Bool
        package var disabled: Bool
        package var createdAt: Date
    }

    package struct SearchPage: Sendable, Equatable {
        package var accounts: [AccountRow]
        package var nextCursor: String?
        package var totalEstimate: Int
        package var totalIsExact: Bool
    }

    package struct Factor: Sendable, Equatable {
        package var id: String
        package var kind: String
        package var name: String?
        package var createdAt: Date
    }

    package struct LinkedIdentity: Sendable, Equatable {
        package var id: String
        package var provider: String
        package var createdAt: Date
        package var lastUsedAt: Date?
    }

    /// An account as the admin API shows it: its details (each value as compact JSON text, strings as they are) and
    /// its credential metadata; never a secret.
    package struct Account: Sendable, Equatable {
        package var accountId: String
        package var version: Int64
        package var anonymous: Bool
        package var details: [Entry]
        package var createdAt: Date
        package var hasPassword: Bool
        package var disabledAt: Date?
        package var lastSignInAt: Date?
        package var verifiedAt: Date?
        package var factors: [Factor]
        package var identities: [LinkedIdentity]
        package var sessionCount: Int

    }

    package struct Session: Sendable, Equatable {
        package var id: String
        package var createdAt: Date
        package var idleExpiresAt: Date
        package var absoluteExpiresAt: Date
        package var assuranceLevel: Int
        package var lastUsedAt: Date?
        package var signInMethod: String?
        package var clientAddress: String?
        package var clientName: String?
    }

    package struct AuditEntry: Sendable, Equatable {
        package var occurredAt: Date
        package var type: String
        package var accountId: String?
        package var actorType: String
        package var actorId: String?
        /// The entry's facts as `key=value` pairs, by key.
        package var facts: [Entry]
        package var erased: Bool

    }

    package struct AuditPage: Sendable, Equatable {
        package var entries: [AuditEntry]
        package var nextCursor: String?
    }

    package struct FailedDelivery: Sendable, Equatable {
        package var eventId: String
        package var type: String
        package var accountId: String
        package var message: String?
        package var attempts: Int
        package var lastError: String?
        package var deadAt: Date
    }

    // MARK: The key

    /// Runs `operation` with `key` as the request's operator key, within the request being served.
    package func asOperator<T: Sendable>(_ key: String, _ operation: () async throws -> T) async throws -> T {
        try await RequestScope.asBearer(key, operation)
    }

    /// Whether the request came through a trusted proxy (whose forwarded headers count).
    package var viaTrustedProxy: Bool { RequestScope.scope.viaTrustedProxy }

    /// The refusal `error` stands for, as the API would answer it (unexpected errors are logged and hidden).
    package func problem(for error: any Error) -> GatewayProblem {
        ProblemMiddleware.problem(for: error, logger: RequestScope.scope.logger)
    }

    /// Who the current key is, checked by Identity (rate-limited, audited with `action` like every admin call).
    package func whoAmI(action: String) async throws -> Operator {
        let found = try await api.upstreams.identity(IdentityContract.operatorAuthorize, IdentityOperatorAuthorizeRequest(
            operatorCall: GatewayAPI.operatorCall(), scope: nil, action: action
        ))
        return Operator(keyId: found.keyId, name: found.name, scopes: found.scopes.map(\.rawValue))
    }

    // MARK: Accounts

    package func searchAccounts(contains: String?, disabled: Bool?, cursor: String?, limit: Int) async throws -> SearchPage {
        let output = try await api.adminSearchAccounts(.init(query: .init(userIdContains: contains, disabled: disabled, cursor: cursor, limit: limit)))
        switch output {
        case .ok(let ok):
            let page = try ok.body.json
            return SearchPage(
                accounts: page.accounts.map {
                    AccountRow(accountId: $0.accountId, userId: $0.userId, anonymous: $0.anonymous, verified: $0.verified, disabled: $0.disabled, createdAt: $0.createdAt)
                },
                nextCursor: page.nextCursor, totalEstimate: page.totalEstimate, totalIsExact: page.totalIsExact
            )
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    package func account(_ accountId: String) async throws -> Account {
        switch try await api.adminGetAccount(.init(path: .init(accountId: accountId))) {
        case .ok(let ok): return try Self.account(try ok.body.json)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    package func disable(_ accountId: String) async throws {
        _ = try await api.adminDisableAccount(.init(path: .init(accountId: accountId)))
    }

    package func enable(_ accountId: String) async throws {
        _ = try await api.adminEnableAccount(.init(path: .init(accountId: accountId)))
    }

    package func sendPasswordReset(_ accountId: String) async throws {
        _ = try await api.adminSendPasswordReset(.init(path: .init(accountId: accountId)))
    }

    package func removeFactor(_ accountId: String, factorId: String) async throws {
        _ = try await api.adminRemoveFactor(.init(path: .init(accountId: accountId, factorId: factorId)))
    }

    package func unlinkIdentity(_ accountId: String, identityId: String) async throws {
        _ = try await api.adminUnlinkIdentity(.init(path: .init(accountId: accountId, identityId: identityId)))
    }

    package func delete(_ accountId: String) async throws {
        _ = try await api.adminDeleteAccount(.init(path: .init(accountId: accountId)))
    }

    /// Makes an account (`POST /admin/v1/accounts`); `details` as the API's JSON object (empty: none).
    package func createAccount(userId: String, password: String?, details: String, verified: Bool) async throws -> Account {
        let body = Components.Schemas.AdminAccountCreation(
            userId: userId, password: password, details: try Self.details(json: details), verified: verified
        )
        switch try await api.adminCreateAccount(.init(body: .json(body))) {
        case .created(let created): return try Self.account(try created.body.json)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    /// One line of an import's report.
    package struct ImportLine: Sendable, Equatable {
        package var line: Int
        package var accountId: String?
        package var problem: String?
    }

    /// Makes accounts from NDJSON (`POST /admin/v1/accounts/import`), each line on its own.
    package func importAccounts(_ ndjson: String) async throws -> (created: Int, failed: Int, lines: [ImportLine]) {
        switch try await api.adminImportAccounts(.init(body: .applicationXNdjson(HTTPBody(ndjson)))) {
        case .ok(let ok):
            let report = try ok.body.json
            return (report.created, report.failed, report.lines.map { line in
                ImportLine(line: line.line, accountId: line.accountId, problem: line.problem.map { problem in
                    ([problem.code, problem.detail].compactMap { $0 } + (problem.errors ?? []).map { "\($0.key): \($0.message)" }).joined(separator: " — ")
                })
            })
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    /// Changes an account (`PATCH /admin/v1/accounts/{id}`) at `version` of its details: a new userId, the address
    /// verified, details set (a JSON object) and removed (keys).
    package func updateAccount(_ accountId: String, userId: String?, verified: Bool, set: String, remove: [String], version: Int64?) async throws -> Account {
        let setDetails = try Self.details(json: set)
        let body = Components.Schemas.AdminAccountChanges(
            userId: userId, verified: verified ? true : nil, set: setDetails, remove: remove.isEmpty ? nil : remove
        )
        let headers = Operations.AdminUpdateAccount.Input.Headers(ifMatch: version.map { "\"\($0)\"" })
        switch try await api.adminUpdateAccount(.init(path: .init(accountId: accountId), headers: headers, body: .json(body))) {
        case .ok(let ok): return try Self.account(try ok.body.json)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    // MARK: Sessions

    package func sessions(_ accountId: String) async throws -> [Session] {
        switch try await api.adminListSessions(.init(path: .init(accountId: accountId))) {
        case .ok(let ok):
            return try ok.body.json.sessions.map {
                Session(
                    id: $0.id, createdAt: $0.createdAt, idleExpiresAt: $0.idleExpiresAt, absoluteExpiresAt: $0.absoluteExpiresAt, assuranceLevel: $0.assuranceLevel,
                    lastUsedAt: $0.lastUsedAt, signInMethod: $0.signInMethod, clientAddress: $0.clientAddress, clientName: $0.clientName
                )
            }
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    /// Ends every session of the account; answers how many.
    package func endSessions(_ accountId: String) async throws -> Int {
        switch try await api.adminEndSessions(.init(path: .init(accountId: accountId))) {
        case .ok(let ok): return try ok.body.json.sessionsEnded
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    package func endSession(_ accountId: String, sessionId: String) async throws {
        _ = try await api.adminEndSession(.init(path: .init(accountId: accountId, sessionId: sessionId)))
    }

    // MARK: Audit and deliveries

    package func audit(accountId: String?, type: String?, cursor: String?, limit: Int) async throws -> AuditPage {
        switch try await api.adminListAudit(.init(query: .init(accountId: accountId, _type: type, cursor: cursor, limit: limit))) {
        case .ok(let ok):
            let page = try ok.body.json
            return AuditPage(
                entries: page.entries.map {
                    AuditEntry(
                        occurredAt: $0.occurredAt, type: $0._type, accountId: $0.accountId, actorType: $0.actorType.rawValue, actorId: $0.actorId,
                        facts: $0.facts.additionalProperties.sorted { $0.key < $1.key }.map { Entry(key: $0.key, value: $0.value) }, erased: $0.erased
                    )
                },
                nextCursor: page.nextCursor
            )
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    package func failedDeliveries(group: String) async throws -> [FailedDelivery] {
        switch try await api.adminListFailedDeliveries(.init(query: .init(group: group, limit: 100))) {
        case .ok(let ok):
            return try ok.body.json.deliveries.map {
                FailedDelivery(eventId: $0.eventId, type: $0._type, accountId: $0.accountId, message: $0.message, attempts: $0.attempts, lastError: $0.lastError, deadAt: $0.deadAt)
            }
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    /// Delivers all of a group's failed deliveries again; answers how many.
    package func redeliver(group: String) async throws -> Int {
        switch try await api.adminRedeliver(.init(body: .json(.init(group: group)))) {
        case .ok(let ok): return try ok.body.json.redelivered
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    // MARK: Webhooks

    package struct Webhook: Sendable, Equatable {
        package var name: String
        package var url: String
        package var types: [String]?
        package var source: String
        package var deliversResetTokens: Bool
    }

    package func webhooks() async throws -> [Webhook] {
        switch try await api.adminListWebhooks(.init()) {
        case .ok(let ok): return try ok.body.json.webhooks.map(Self.webhook)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    /// Adds an endpoint; answers it and the secret made for it (nil when one was given).
    package func addWebhook(name: String, url: String, types: [String]?, secret: String?) async throws -> (webhook: Webhook, secret: String?) {
        switch try await api.adminAddWebhook(.init(body: .json(.init(name: name, url: url, types: types, secret: secret)))) {
        case .created(let created):
            let body = try created.body.json
            return (Self.webhook(body.webhook), body.secret)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    package func removeWebhook(name: String) async throws -> Int {
        switch try await api.adminRemoveWebhook(.init(path: .init(name: name))) {
        case .ok(let ok): return try ok.body.json.droppedDeliveries
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    static func webhook(_ endpoint: Components.Schemas.WebhookEndpoint) -> Webhook {
        Webhook(name: endpoint.name, url: endpoint.url, types: endpoint.types, source: endpoint.source.rawValue, deliversResetTokens: endpoint.deliversResetTokens)
    }

    // MARK: Helpers

    /// Details from a form's JSON object text (blank: none); anything else is the API's malformed request.
    static func details(json text: String) throws -> AccountDetails? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        do {
            return try JSONDecoder().decode(AccountDetails.self, from: Data(trimmed.utf8))
        } catch {
            throw GatewayProblem.malformed("The details are not a JSON object of account keys (e.g. {\"name\": {\"givenName\": \"Ada\"}}).")
        }
    }

    static func account(_ shown: Components.Schemas.AdminAccount) throws -> Account {
        let credentials = shown.credentials
        return Account(
            accountId: shown.account.accountId, version: shown.account.version, anonymous: shown.account.isAnonymous ?? false,
            details: try Self.details(shown.account.details), createdAt: credentials.createdAt, hasPassword: credentials.hasPassword,
            disabledAt: credentials.disabledAt, lastSignInAt: credentials.lastSignInAt, verifiedAt: credentials.verifiedAt,
            factors: credentials.factors.map { Factor(id: $0.id, kind: $0.kind, name: $0.name, createdAt: $0.createdAt) },
            identities: credentials.identities.map { LinkedIdentity(id: $0.id, provider: $0.provider, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt) },
            sessionCount: credentials.sessionCount
        )
    }

    /// Each detail as text, by key: a string as it is, anything else as compact JSON (as the API answers it).
    static func details(_ details: some Encodable) throws -> [Entry] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let object = try JSONSerialization.jsonObject(with: encoder.encode(details)) as? [String: Any] else { return [] }
        return try object.keys.sorted().map { key in
            let value = object[key]!
            if let text = value as? String { return Entry(key: key, value: text) }
            let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
            return Entry(key: key, value: String(decoding: data, as: UTF8.self))
        }
    }

    /// A handler's answer that is neither its success nor a thrown refusal (the handlers throw theirs).
    static func unexpected(_ status: Int) -> GatewayProblem {
        GatewayProblem(status: .badGateway, code: .gatewayUpstreamFailed, detail: "The admin API answered \(status).")
    }
}
