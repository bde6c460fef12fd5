import KontoModel

/// A session as Identity keeps it: never the token, only its SHA-256.
public struct StoredSession: Sendable, Equatable {
    public var id: String
    public var accountId: String
    /// SHA-256 of the token (32 bytes).
    public var tokenHash: [UInt8]
    public var createdAt: Timestamp
    /// The idle expiry: pushed forward as the session is used, never past ``absoluteExpiresAt``.
    public var idleExpiresAt: Timestamp
    public var absoluteExpiresAt: Timestamp
    /// Until when security-related operations need no password; nil when not privileged.
    public var privilegedUntil: Timestamp?
    /// Whether the account is anonymous; filled in by ``IdentityStorage/session(tokenHash:)``, ignored when stored.
    public var accountIsAnonymous: Bool
    /// The account's userId as given (nil when anonymous); filled in and ignored as ``accountIsAnonymous`` is.
    public var accountUserId: String?

    public init(
        id: String,
        accountId: String,
        tokenHash: [UInt8],
        createdAt: Timestamp,
        idleExpiresAt: Timestamp,
        absoluteExpiresAt: Timestamp,
        privilegedUntil: Timestamp?,
        accountIsAnonymous: Bool = false,
        accountUserId: String? = nil
    ) {
        self.id = id
        self.accountId = accountId
        self.tokenHash = tokenHash
        self.createdAt = createdAt
        self.idleExpiresAt = idleExpiresAt
        self.absoluteExpiresAt = absoluteExpiresAt
        self.privilegedUntil = privilegedUntil
        self.accountIsAnonymous = accountIsAnonymous
        self.accountUserId = accountUserId
    }

    /// Whether the session may be used at `now`.
    public func isValid(at now: Timestamp) -> Bool {
        now < idleExpiresAt && now < absoluteExpiresAt
    }

    /// Whether security-related operations need no password at `now`.
    public func isPrivileged(at now: Timestamp) -> Bool {
        privilegedUntil.map { now < $0 } ?? false
    }
}
