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

    public init(accountId: String, session: IdentitySession, details: AccountDetails, recoveryCodesRemaining: Int? = nil) {
        self.accountId = accountId
        self.session = session
        self.details = details
        self.recoveryCodesRemaining = recoveryCodesRemaining
    }
}

/// What a valid session says about its caller.
public struct IdentitySessionInfo: Codable, Sendable, Equatable {
    public var accountId: String
    /// Stable id of the session (not its token), for logs and "log out this device".
    public var sessionId: String
    public var expiresAt: Timestamp
    /// Until when security-related operations are allowed without the password; nil when not privileged.
    public var privilegedUntil: Timestamp?
    public var isAnonymous: Bool
    /// The account's userId as it was given (nil for an anonymous account); added in a compatible way, so an older
    /// Identity's answer without it still decodes.
    public var userId: String?
    /// How the session was authenticated: 1 (a password, or none for an anonymous account), 2 (with a second
    /// factor). Optional: an older Identity's answer without it decodes.
    public var assuranceLevel: Int?
    /// Whether the account's address (its userId) is verified; nil for an account without one. Added compatibly.
    public var emailVerified: Bool?
    /// Where userIds are usernames: the contact address (the `email` detail) last confirmed; the account's answer says
    /// `emailVerified` while its `email` still holds it (``AccountAssembler``). Added compatibly.
    public var verifiedEmail: String?

    public init(
        accountId: String, sessionId: String, expiresAt: Timestamp, privilegedUntil: Timestamp?, isAnonymous: Bool, userId: String?, assuranceLevel: Int? = nil,
        emailVerified: Bool? = nil, verifiedEmail: String? = nil
    ) {
        self.accountId = accountId
        self.sessionId = sessionId
        self.expiresAt = expiresAt
        self.privilegedUntil = privilegedUntil
        self.isAnonymous = isAnonymous
        self.userId = userId
        self.assuranceLevel = assuranceLevel
        self.emailVerified = emailVerified
        self.verifiedEmail = verifiedEmail
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

    public init(sessionsEnded: Int, accountId: String? = nil) {
        self.sessionsEnded = sessionsEnded
        self.accountId = accountId
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

/// An answer with nothing to say but that it worked.
public struct IdentityDone: Codable, Sendable, Equatable {
    public init() {}
}
