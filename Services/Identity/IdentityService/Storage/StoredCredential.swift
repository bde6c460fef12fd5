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
    /// Raised by every change of the credential (password, reset, userId, sign-up from anonymous). A session carries
    /// the version it was created under and is valid only while it is current, so a login that checked the previous
    /// password cannot leave a session behind a change, however the two interleave.
    public var credentialVersion: Int64
    /// When the userId (an email address) was confirmed by a link sent to it; nil while it is not. A new userId is
    /// unverified. (The login lookup leaves it nil: a login does not need it.)
    public var emailVerifiedAt: Timestamp?
    /// Where userIds are usernames: the contact address (the `email` detail, Profile's) last confirmed by a link sent
    /// to it. The address is verified while the detail still holds it; nil until one is confirmed.
    public var verifiedEmail: String?
    /// When an operator disabled the account (docs/ADMIN.md); nil while it is enabled. No sign-in succeeds meanwhile.
    public var disabledAt: Timestamp?

    public var isAnonymous: Bool { normalizedUserId == nil }

    public init(
        accountId: String,
        userId: String?,
        normalizedUserId: String?,
        passwordHash: String?,
        createdAt: Timestamp,
        isPending: Bool = false,
        credentialVersion: Int64 = 1,
        emailVerifiedAt: Timestamp? = nil,
        verifiedEmail: String? = nil,
        disabledAt: Timestamp? = nil
    ) {
        self.accountId = accountId
        self.userId = userId
        self.normalizedUserId = normalizedUserId
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.isPending = isPending
        self.credentialVersion = credentialVersion
        self.emailVerifiedAt = emailVerifiedAt
        self.verifiedEmail = verifiedEmail
        self.disabledAt = disabledAt
    }
}
