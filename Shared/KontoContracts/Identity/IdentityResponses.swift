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

    public init(accountId: String, session: IdentitySession, details: AccountDetails) {
        self.accountId = accountId
        self.session = session
        self.details = details
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

    public init(accountId: String, sessionId: String, expiresAt: Timestamp, privilegedUntil: Timestamp?, isAnonymous: Bool, userId: String?) {
        self.accountId = accountId
        self.sessionId = sessionId
        self.expiresAt = expiresAt
        self.privilegedUntil = privilegedUntil
        self.isAnonymous = isAnonymous
        self.userId = userId
    }
}

/// How many sessions an operation ended.
public struct IdentitySessionsEnded: Codable, Sendable, Equatable {
    public var sessionsEnded: Int

    public init(sessionsEnded: Int) {
        self.sessionsEnded = sessionsEnded
    }
}

/// The privileged window reauthentication opened.
public struct IdentityPrivilege: Codable, Sendable, Equatable {
    public var privilegedUntil: Timestamp

    public init(privilegedUntil: Timestamp) {
        self.privilegedUntil = privilegedUntil
    }
}

/// An answer with nothing to say but that it worked.
public struct IdentityDone: Codable, Sendable, Equatable {
    public init() {}
}
