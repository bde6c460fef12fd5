import Foundation
import KontoModel
import OpenAPIRuntime

/// An account for an operator to make (docs/ADMIN.md, "Creating and importing accounts"): a password, a hash brought
/// from another system, or neither.
public struct KontoNewAccount: Sendable, Encodable {
    public var userId: String
    public var password: String?
    /// A PHC string: argon2id, bcrypt (`$2b$`, `$2a$`, `$2y$`) or PBKDF2-SHA256.
    public var passwordHash: String?
    public var details: AccountDetails?
    public var verified: Bool?

    public init(userId: String, password: String? = nil, passwordHash: String? = nil, details: AccountDetails? = nil, verified: Bool? = nil) {
        self.userId = userId
        self.password = password
        self.passwordHash = passwordHash
        self.details = details
        self.verified = verified
    }
}

/// An operator's change to an account: whatever is given changes (docs/ADMIN.md, "Changing an account").
public struct KontoAccountChanges: Sendable {
    public var userId: String?
    /// Only true: the address counts as verified.
    public var verified: Bool?
    public var set: AccountDetails?
    public var remove: [String]?
    /// The details' version the change expects (an ETag's number).
    public var expectedVersion: Int64?

    public init(userId: String? = nil, verified: Bool? = nil, set: AccountDetails? = nil, remove: [String]? = nil, expectedVersion: Int64? = nil) {
        self.userId = userId
        self.verified = verified
        self.set = set
        self.remove = remove
        self.expectedVersion = expectedVersion
    }
}

/// What became of an import's lines.
public struct KontoImportReport: Sendable, Equatable, Encodable {
    public struct Line: Sendable, Equatable, Encodable {
        /// Its number in the body, from 1.
        public var line: Int
        public var accountId: String?
        /// The refusal's code and detail, as the single call would answer.
        public var code: String?
        public var detail: String?
    }

    public var created: Int
    public var failed: Int
    public var lines: [Line]
}

extension KontoAdmin {
    /// Makes an account; no session is made and no mail sent (docs/ADMIN.md).
    public func createAccount(_ new: KontoNewAccount) async throws -> KontoAdminAccount {
        let body = Components.Schemas.AdminAccountCreation(
            userId: new.userId, password: new.password, passwordHash: new.passwordHash, details: new.details, verified: new.verified
        )
        switch try await client.call(token: key, { try await $0.adminCreateAccount(body: .json(body)) }) {
        case .created(let created): return Self.account(try created.body.json)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Changes an account; answers it as it is after the change (docs/ADMIN.md).
    public func updateAccount(_ accountId: String, _ changes: KontoAccountChanges) async throws -> KontoAdminAccount {
        let body = Components.Schemas.AdminAccountChanges(userId: changes.userId, verified: changes.verified, set: changes.set, remove: changes.remove)
        let ifMatch = changes.expectedVersion.map { "\"\($0)\"" }
        switch try await client.call(token: key, { try await $0.adminUpdateAccount(path: .init(accountId: accountId), headers: .init(ifMatch: ifMatch), body: .json(body)) }) {
        case .ok(let ok): return Self.account(try ok.body.json)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Makes many accounts from NDJSON (one ``KontoNewAccount`` as JSON per line), each made or refused on its own.
    public func importAccounts(ndjson: Data) async throws -> KontoImportReport {
        switch try await client.call(token: key, { try await $0.adminImportAccounts(body: .applicationXNdjson(HTTPBody(ndjson))) }) {
        case .ok(let ok):
            let report = try ok.body.json
            return KontoImportReport(
                created: report.created, failed: report.failed,
                lines: report.lines.map { .init(line: $0.line, accountId: $0.accountId, code: $0.problem?.code, detail: $0.problem?.detail) }
            )
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }
}
