import KontoModel

/// An account's credentials as Identity keeps them.
public struct StoredCredential: Sendable, Equatable {
    public var accountId: String
    /// As the user gave it (trimmed); nil for an anonymous account.
    public var userId: String?
    /// What uniqueness and lookups use (``UserIdNormalization``); nil for an anonymous account.
    public var normalizedUserId: String?
    /// The PHC string; nil for an anonymous account.
    public var passwordHash: String?
    public var createdAt: Timestamp
    /// A sign-up in progress (``IdentityStorage/reserveAccount(_:)``): the userId is taken, the account not usable.
    public var isPending: Bool

    public var isAnonymous: Bool { normalizedUserId == nil }

    public init(accountId: String, userId: String?, normalizedUserId: String?, passwordHash: String?, createdAt: Timestamp, isPending: Bool = false) {
        self.accountId = accountId
        self.userId = userId
        self.normalizedUserId = normalizedUserId
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.isPending = isPending
    }
}
