/// Who a provider says signed in: what a verified ID token (and, for Apple, the name sent beside it) gives.
public struct VerifiedIdentity: Sendable, Equatable, Codable {
    public var provider: String
    /// The provider's stable identifier of the user (`sub`).
    public var subject: String
    public var email: String?
    /// Whether the provider vouches for the address (`email_verified`).
    public var emailVerified: Bool
    public var givenName: String?
    public var familyName: String?
    /// The client id the token was minted for (one of the accepted audiences): Apple's native code is exchanged,
    /// and its refresh token revoked, as that client.
    public var audience: String
    /// When the token stops being valid: its nonce is remembered until then.
    public var expiresAt: Double

    public init(provider: String, subject: String, email: String?, emailVerified: Bool, givenName: String? = nil, familyName: String? = nil, audience: String, expiresAt: Double) {
        self.provider = provider
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.givenName = givenName
        self.familyName = familyName
        self.audience = audience
        self.expiresAt = expiresAt
    }
}
