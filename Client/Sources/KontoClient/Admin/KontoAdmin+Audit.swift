import Foundation
import OpenAPIRuntime

/// An audit entry as an operator reads it (docs/ADMIN.md, "Audit log").
public struct KontoAuditEntry: Sendable, Equatable, Encodable {
    public var id: String
    /// Its place in the hash chain.
    public var position: Int64?
    public var occurredAt: Date
    public var accountId: String?
    /// `account`, `operator`, `system` or `anonymous`.
    public var actorType: String
    public var actorId: String?
    public var type: String
    public var operation: String?
    public var facts: [String: String]
    public var personal: [String: String]?
    public var erased: Bool
}

/// An audit query's filters (each optional; every one given must hold) and its page.
public struct KontoAuditQuery: Sendable, Equatable {
    public var accountId: String?
    public var actorId: String?
    public var type: String?
    public var occurredAfter: Date?
    public var occurredBefore: Date?
    public var cursor: String?
    public var limit: Int?

    public init(
        accountId: String? = nil, actorId: String? = nil, type: String? = nil, occurredAfter: Date? = nil, occurredBefore: Date? = nil,
        cursor: String? = nil, limit: Int? = nil
    ) {
        self.accountId = accountId
        self.actorId = actorId
        self.type = type
        self.occurredAfter = occurredAfter
        self.occurredBefore = occurredBefore
        self.cursor = cursor
        self.limit = limit
    }
}

public struct KontoAuditPage: Sendable, Equatable {
    public var entries: [KontoAuditEntry]
    public var nextCursor: String?
}

/// What a verification of the audit chain found.
public struct KontoAuditVerification: Sendable, Equatable, Encodable {
    public var intact: Bool
    public var entriesChecked: Int64
    public var anchorPosition: Int64
    public var headPosition: Int64
    public var headHash: String
    public var brokenAt: Int64?
    public var problem: String?
}

extension KontoAdmin {
    /// The audit log, newest first (scope `audit:read`).
    public func audit(_ query: KontoAuditQuery) async throws -> KontoAuditPage {
        let input = Operations.AdminListAudit.Input.Query(
            accountId: query.accountId, actorId: query.actorId, _type: query.type, occurredAfter: query.occurredAfter, occurredBefore: query.occurredBefore,
            cursor: query.cursor, limit: query.limit
        )
        switch try await client.call(token: key, { try await $0.adminListAudit(query: input) }) {
        case .ok(let ok):
            let page = try ok.body.json
            return KontoAuditPage(
                entries: page.entries.map {
                    KontoAuditEntry(
                        id: $0.id, position: $0.position, occurredAt: $0.occurredAt, accountId: $0.accountId, actorType: $0.actorType.rawValue,
                        actorId: $0.actorId, type: $0._type, operation: $0.operation, facts: $0.facts.additionalProperties,
                        personal: $0.personal?.additionalProperties, erased: $0.erased
                    )
                },
                nextCursor: page.nextCursor
            )
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Checks the audit log's hash chain (scope `audit:read`); a broken chain is an answer, not an error.
    public func verifyAudit() async throws -> KontoAuditVerification {
        switch try await client.call(token: key, { try await $0.adminVerifyAudit() }) {
        case .ok(let ok):
            let found = try ok.body.json
            return KontoAuditVerification(
                intact: found.intact, entriesChecked: found.entriesChecked, anchorPosition: found.anchorPosition, headPosition: found.headPosition,
                headHash: found.headHash, brokenAt: found.brokenAt, problem: found.problem
            )
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }
}
