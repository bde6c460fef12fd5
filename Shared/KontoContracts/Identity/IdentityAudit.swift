import Foundation
import KontoModel

/// Who made an audit entry happen.
public enum AuditActorType: String, Codable, Sendable, CaseIterable {
    /// The account itself (its session, its password, a link mailed to it): `actorId` is the account's id.
    case account
    /// An operator: `actorId` is the operator key's id.
    case `operator`
    /// Identity on its own (retention, clean-ups): no `actorId`.
    case system
    /// Nobody known (a sign-in that failed for an unknown userId, a refused operator key): no `actorId`.
    case anonymous
}

/// One entry of the audit log (docs/ADMIN.md, "Audit log"): what happened, to which account, by whom, with facts
/// that are never personal and personal data (client address, userIds) that goes when the account is deleted.
public struct IdentityAuditEntry: Codable, Sendable, Equatable {
    public var id: UUID
    /// Its place in the hash chain, from 1; nil for an entry not sealed yet (sealed within seconds, and before any
    /// list or verification answers).
    public var position: Int64?
    public var occurredAt: Timestamp
    public var accountId: String?
    public var actorType: AuditActorType
    public var actorId: String?
    /// What happened, e.g. `signIn.succeeded`, `signIn.failed`, `password.changed`, `admin.disableAccount`.
    public var type: String
    /// The Identity method that served the call (`login`, `confirmPasswordReset`, …); nil for Identity's own jobs.
    public var operation: String?
    /// Never personal: a failure's internal reason, a factor's id and kind, the outcome of an admin call.
    public var facts: [String: String]
    /// The client's address and any userId involved; nil when there was none or the account has been deleted since.
    public var personal: [String: String]?
    /// The personal data was erased with the account (the entry's hash still verifies).
    public var erased: Bool

    public init(
        id: UUID, position: Int64?, occurredAt: Timestamp, accountId: String?, actorType: AuditActorType, actorId: String?, type: String,
        operation: String?, facts: [String: String], personal: [String: String]?, erased: Bool
    ) {
        self.id = id
        self.position = position
        self.occurredAt = occurredAt
        self.accountId = accountId
        self.actorType = actorType
        self.actorId = actorId
        self.type = type
        self.operation = operation
        self.facts = facts
        self.personal = personal
        self.erased = erased
    }
}

/// The audit log, filtered, newest first.
public struct IdentityAuditQueryRequest: Codable, Sendable {
    public static let maximumLimit = 500
    public static let maximumTextLength = 200

    public var operatorCall: IdentityOperatorCall
    public var accountId: String?
    /// An account's or an operator key's id.
    public var actorId: String?
    public var type: String?
    /// At or after.
    public var occurredAfter: Timestamp?
    /// Before.
    public var occurredBefore: Timestamp?
    /// From the previous page.
    public var cursor: String?
    /// 1 to ``maximumLimit``; 100 when nil.
    public var limit: Int?

    public init(
        operatorCall: IdentityOperatorCall, accountId: String? = nil, actorId: String? = nil, type: String? = nil, occurredAfter: Timestamp? = nil,
        occurredBefore: Timestamp? = nil, cursor: String? = nil, limit: Int? = nil
    ) {
        self.operatorCall = operatorCall
        self.accountId = accountId
        self.actorId = actorId
        self.type = type
        self.occurredAfter = occurredAfter
        self.occurredBefore = occurredBefore
        self.cursor = cursor
        self.limit = limit
    }
}

public struct IdentityAuditPage: Codable, Sendable, Equatable {
    public var entries: [IdentityAuditEntry]
    /// Set when the page is full: the next page starts after its last entry.
    public var nextCursor: String?

    public init(entries: [IdentityAuditEntry], nextCursor: String?) {
        self.entries = entries
        self.nextCursor = nextCursor
    }
}

/// Checks the audit log's hash chain from its anchor to its head.
public struct IdentityAuditVerifyRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall

    public init(operatorCall: IdentityOperatorCall) {
        self.operatorCall = operatorCall
    }
}

/// What a verification of the chain found.
public struct IdentityAuditVerification: Codable, Sendable, Equatable {
    /// Every entry from the anchor to the head is there, unchanged.
    public var intact: Bool
    public var entriesChecked: Int64
    /// The last entry removed by retention (0: none yet); the chain starts after it.
    public var anchorPosition: Int64
    public var headPosition: Int64
    /// The head's hash (hex): kept elsewhere, it shows later that the log was not rewritten from before it.
    public var headHash: String
    /// The first position found wrong (a changed entry, or the place of a removed one).
    public var brokenAt: Int64?
    /// What was wrong there, for a person.
    public var problem: String?

    public init(
        intact: Bool, entriesChecked: Int64, anchorPosition: Int64, headPosition: Int64, headHash: String, brokenAt: Int64? = nil, problem: String? = nil
    ) {
        self.intact = intact
        self.entriesChecked = entriesChecked
        self.anchorPosition = anchorPosition
        self.headPosition = headPosition
        self.headHash = headHash
        self.brokenAt = brokenAt
        self.problem = problem
    }
}
