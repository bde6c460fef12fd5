import KontoModel

/// An authorization code as Identity keeps it (docs/OIDC.md): never the code, only its SHA-256, with everything the
/// token request must match and everything the tokens will say. Single use; kept a while past its expiry once used,
/// so a second use is recognised as one (and the tokens the first gave are revoked).
public struct StoredAuthorizationCode: Sendable, Equatable {
    /// SHA-256 of the code (32 bytes).
    public var codeHash: [UInt8]
    public var accountId: String
    /// The console session the user signed in with: the code is refused once it has ended.
    public var sessionId: String
    public var clientId: String
    /// Exactly as the authorization request gave it; the token request must repeat it.
    public var redirectURI: String
    /// PKCE's S256 challenge (RFC 7636), base64url.
    public var codeChallenge: String
    public var scopes: [String]
    public var nonce: String?
    /// When the user last authenticated (the session's sign-in), the session's assurance level and sign-in method:
    /// the ID token's `auth_time`, `acr` and `amr`.
    public var authTime: Timestamp
    public var assuranceLevel: Int
    public var signInMethod: String?
    /// The account's credential version when the code was issued: a password change in between voids it.
    public var credentialVersion: Int64
    public var issuedAt: Timestamp
    public var expiresAt: Timestamp
    /// Until when a used code is remembered (to recognise a second use); after it the code is forgotten.
    public var keepUntil: Timestamp

    public init(
        codeHash: [UInt8], accountId: String, sessionId: String, clientId: String, redirectURI: String, codeChallenge: String,
        scopes: [String], nonce: String?, authTime: Timestamp, assuranceLevel: Int, signInMethod: String?, credentialVersion: Int64,
        issuedAt: Timestamp, expiresAt: Timestamp, keepUntil: Timestamp
    ) {
        self.codeHash = codeHash
        self.accountId = accountId
        self.sessionId = sessionId
        self.clientId = clientId
        self.redirectURI = redirectURI
        self.codeChallenge = codeChallenge
        self.scopes = scopes
        self.nonce = nonce
        self.authTime = authTime
        self.assuranceLevel = assuranceLevel
        self.signInMethod = signInMethod
        self.credentialVersion = credentialVersion
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.keepUntil = keepUntil
    }
}

/// What redeeming an authorization code came to (``OpenIDStorage/redeemAuthorizationCode(codeHash:at:exchange:)``).
public enum AuthorizationCodeRedemption: Sendable, Equatable {
    /// No such code, it expired, its session ended, or the account changed since (its credential, its disabling).
    case unknown
    /// The code was redeemed before: this second use revoked the grant the first one made (true when there was one).
    case reused(accountId: String, clientId: String, revokedGrant: Bool)
    /// The exchange's checks refused it (another client, another redirect URI, a wrong PKCE verifier): the code is
    /// used up all the same.
    case refused(StoredAuthorizationCode)
    /// Redeemed: the grant was stored.
    case redeemed(StoredAuthorizationCode, StoredOpenIDGrant)
}
