import KontoModel

/// An external identity (a provider's subject) linked to an account.
public struct StoredExternalIdentity: Sendable, Equatable {
    public var id: String
    public var accountId: String
    /// The configured provider's name.
    public var provider: String
    /// The provider's stable identifier of the user (`sub`); with the provider, unique.
    public var subject: String
    /// The address the provider gave when it was last used, and whether it vouched for it.
    public var email: String?
    public var emailVerified: Bool
    public var createdAt: Timestamp
    public var lastUsedAt: Timestamp?
    /// The provider's refresh token, sealed, where Konto must keep one to revoke it at deletion (Apple).
    public var sealedRefreshToken: [UInt8]?

    public init(
        id: String, accountId: String, provider: String, subject: String, email: String?, emailVerified: Bool,
        createdAt: Timestamp, lastUsedAt: Timestamp? = nil, sealedRefreshToken: [UInt8]? = nil
    ) {
        self.id = id
        self.accountId = accountId
        self.provider = provider
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.sealedRefreshToken = sealedRefreshToken
    }
}

/// What unlinking an identity came to.
public enum ExternalIdentityRemoval: Sendable, Equatable {
    case removed(StoredExternalIdentity)
    /// Not one of the account's identities.
    case notFound
    /// The account would be left without a way to sign in (no password, no other identity).
    case lastSignInMethod
}

/// A provider token to revoke: written with the deletion of its account, kept until the provider confirmed the
/// revocation or it was given up (dead).
public struct StoredRevocation: Sendable, Equatable {
    public var id: String
    public var provider: String
    /// The account and identity the token was sealed for (``ProviderTokenBox``): the account is gone, the seal's
    /// binding stays.
    public var accountId: String
    public var identityId: String
    public var sealedToken: [UInt8]
    public var attempts: Int

    public init(id: String, provider: String, accountId: String, identityId: String, sealedToken: [UInt8], attempts: Int = 0) {
        self.id = id
        self.provider = provider
        self.accountId = accountId
        self.identityId = identityId
        self.sealedToken = sealedToken
        self.attempts = attempts
    }
}
