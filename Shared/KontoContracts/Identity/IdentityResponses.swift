import Foundation
import KontoModel

/// A new session: its token (only ever shown here, to its owner) and when it ends at the latest.
public struct IdentitySession: Codable, Sendable, Equatable {
    public var token: BearerToken
    /// The absolute end; an idle session ends earlier.
    public var expiresAt: Timestamp

    public init(token: BearerToken, expiresAt: Timestamp) {
        self.token = token
        self.expiresAt = expiresAt
    }
}

/// The answer to sign-up, anonymous sign-in and login.
public struct IdentityAccountSession: Codable, Sendable, Equatable {
    public var accountId: String
    public var session: IdentitySession
    /// The account's details as Profile holds them (empty for an anonymous account); never the password.
    public var details: AccountDetails
    /// After a login completed with a recovery code: how many unused ones are left.
    public var recoveryCodesRemaining: Int?
    /// What Identity knows about the account the session is for. Added compatibly: nil in an older Identity's answer.
    public var account: IdentityAccountFacts?

    public init(session: IdentitySession, details: AccountDetails, account: IdentityAccountFacts, recoveryCodesRemaining: Int? = nil) {
        self.accountId = account.accountId
        self.session = session
        self.details = details
        self.recoveryCodesRemaining = recoveryCodesRemaining
        self.account = account
    }
}

/// What a valid session says about its caller: the session, and Identity's facts about its account as one member.
///
/// The facts travelled as separate fields before `account` held them; those are still written beside it, so an older
/// gateway reads a newer Identity's answer, and read when `account` is absent, so a newer gateway reads an older one.
public struct IdentitySessionInfo: Codable, Sendable, Equatable {
    public var account: IdentityAccountFacts
    /// Stable id of the session (not its token), for logs and "log out this device".
    public var sessionId: String
    public var expiresAt: Timestamp
    /// Until when security-related operations are allowed without the password; nil when not privileged.
    public var privilegedUntil: Timestamp?
    /// How the session was authenticated: 1 (a password, or none for an anonymous account), 2 (with a second
    /// factor). Optional: an older Identity's answer without it decodes.
    public var assuranceLevel: Int?

    public var accountId: String { account.accountId }

    public init(account: IdentityAccountFacts, sessionId: String, expiresAt: Timestamp, privilegedUntil: Timestamp?, assuranceLevel: Int? = nil) {
        self.account = account
        self.sessionId = sessionId
        self.expiresAt = expiresAt
        self.privilegedUntil = privilegedUntil
        self.assuranceLevel = assuranceLevel
    }

    private enum CodingKeys: String, CodingKey {
        case account, sessionId, expiresAt, privilegedUntil, assuranceLevel
        // The facts' fields as they travelled before `account`.
        case accountId, isAnonymous, userId, emailVerified, verifiedEmail
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sessionId = try container.decode(String.self, forKey: .sessionId)
        expiresAt = try container.decode(Timestamp.self, forKey: .expiresAt)
        privilegedUntil = try container.decodeIfPresent(Timestamp.self, forKey: .privilegedUntil)
        assuranceLevel = try container.decodeIfPresent(Int.self, forKey: .assuranceLevel)
        if let account = try container.decodeIfPresent(IdentityAccountFacts.self, forKey: .account) {
            self.account = account
        } else {
            account = IdentityAccountFacts(
                accountId: try container.decode(String.self, forKey: .accountId),
                userId: try container.decodeIfPresent(String.self, forKey: .userId),
                isAnonymous: try container.decode(Bool.self, forKey: .isAnonymous),
                emailVerified: try container.decodeIfPresent(Bool.self, forKey: .emailVerified),
                verifiedEmail: try container.decodeIfPresent(String.self, forKey: .verifiedEmail)
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(account, forKey: .account)
        try container.encode(sessionId, forKey: .sessionId)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encodeIfPresent(privilegedUntil, forKey: .privilegedUntil)
        try container.encodeIfPresent(assuranceLevel, forKey: .assuranceLevel)
        try container.encode(account.accountId, forKey: .accountId)
        try container.encode(account.isAnonymous, forKey: .isAnonymous)
        try container.encodeIfPresent(account.userId, forKey: .userId)
        try container.encodeIfPresent(account.emailVerified, forKey: .emailVerified)
        try container.encodeIfPresent(account.verifiedEmail, forKey: .verifiedEmail)
    }
}

/// An address confirmed: the account it belongs to (the caller named only a token), so the gateway drops what it
/// caches of that account.
public struct IdentityEmailVerified: Codable, Sendable, Equatable {
    public var accountId: String

    public init(accountId: String) {
        self.accountId = accountId
    }
}

/// How many sessions an operation ended.
public struct IdentitySessionsEnded: Codable, Sendable, Equatable {
    public var sessionsEnded: Int
    /// The account concerned, where the caller could not name it (a password reset, known by its token only), so
    /// the gateway drops what it caches of that account alone. Optional: an older Identity's answer still decodes.
    public var accountId: String?
    /// The events the change wrote (committed with it): the gateway waits until every other gateway's cache has
    /// read them (`notifications.tailBarrier`) before it answers. Optional: an older Identity's answer still decodes.
    public var eventIds: [UUID]?

    public init(sessionsEnded: Int, accountId: String? = nil, eventIds: [UUID]? = nil) {
        self.sessionsEnded = sessionsEnded
        self.accountId = accountId
        self.eventIds = eventIds
    }
}

/// The privileged window reauthentication opened, and the fresh session that replaced the presented one (every
/// authentication issues a new token; the presented one stopped working). Optional: an older Identity's answer
/// without it still decodes, and its caller keeps the token it had.
public struct IdentityPrivilege: Codable, Sendable, Equatable {
    public var privilegedUntil: Timestamp
    public var session: IdentitySession?

    public init(privilegedUntil: Timestamp, session: IdentitySession? = nil) {
        self.privilegedUntil = privilegedUntil
        self.session = session
    }
}

/// An answer with nothing to say but that it worked, and, for a change that ends sessions (a deletion, a new
/// userId), the events it wrote (see ``IdentitySessionsEnded/eventIds``).
public struct IdentityDone: Codable, Sendable, Equatable {
    public var eventIds: [UUID]?

    public init(eventIds: [UUID]? = nil) {
        self.eventIds = eventIds
    }
}
