import KontoModel

/// What one authorization gave a client (docs/OIDC.md): the family its access tokens name and its refresh tokens
/// rotate within. It lives while the account's credential stays at the version it was granted under and the account is
/// not disabled, until its absolute expiry, and while its refresh token is used before the idle expiry; the user
/// revoking the client, the client revoking a token, a refresh token used twice, or the account's deletion end it.
public struct StoredOpenIDGrant: Sendable, Equatable {
    public var id: String
    public var accountId: String
    public var clientId: String
    /// The console session it was granted through (RP-initiated logout ends the grants made through the session it
    /// ends); nil once that session ended otherwise, or for a grant that never had one.
    public var sessionId: String?
    public var scopes: [String]
    public var authTime: Timestamp
    public var assuranceLevel: Int
    public var signInMethod: String?
    public var credentialVersion: Int64
    public var createdAt: Timestamp
    /// Moved to the newest refresh token's expiry at each rotation (to the access token's when there is none).
    public var idleExpiresAt: Timestamp
    public var absoluteExpiresAt: Timestamp
    /// When a refresh token was last exchanged; nil before the first.
    public var lastRefreshedAt: Timestamp?

    public init(
        id: String, accountId: String, clientId: String, sessionId: String?, scopes: [String], authTime: Timestamp, assuranceLevel: Int,
        signInMethod: String?, credentialVersion: Int64, createdAt: Timestamp, idleExpiresAt: Timestamp, absoluteExpiresAt: Timestamp,
        lastRefreshedAt: Timestamp? = nil
    ) {
        self.id = id
        self.accountId = accountId
        self.clientId = clientId
        self.sessionId = sessionId
        self.scopes = scopes
        self.authTime = authTime
        self.assuranceLevel = assuranceLevel
        self.signInMethod = signInMethod
        self.credentialVersion = credentialVersion
        self.createdAt = createdAt
        self.idleExpiresAt = idleExpiresAt
        self.absoluteExpiresAt = absoluteExpiresAt
        self.lastRefreshedAt = lastRefreshedAt
    }

    /// Whether it may be used at `now` (its account's state is checked beside it).
    public func isLive(at now: Timestamp) -> Bool {
        now < idleExpiresAt && now < absoluteExpiresAt
    }
}

/// A refresh token as Identity keeps it: its SHA-256 and until when it may be exchanged. A used one is kept until
/// then, so its second use is recognised and ends the grant (RFC 9700 4.14.2).
public struct StoredRefreshToken: Sendable, Equatable {
    public var tokenHash: [UInt8]
    public var expiresAt: Timestamp

    public init(tokenHash: [UInt8], expiresAt: Timestamp) {
        self.tokenHash = tokenHash
        self.expiresAt = expiresAt
    }
}

/// A grant to store with its first refresh token, if the client is to have one (`offline_access`).
public struct NewOpenIDGrant: Sendable, Equatable {
    public var grant: StoredOpenIDGrant
    public var refreshToken: StoredRefreshToken?

    public init(grant: StoredOpenIDGrant, refreshToken: StoredRefreshToken?) {
        self.grant = grant
        self.refreshToken = refreshToken
    }
}

/// What exchanging a refresh token came to (``OpenIDStorage/rotateRefreshToken(tokenHash:at:replacement:check:)``).
public enum RefreshTokenRotation: Sendable, Equatable {
    /// No such token, it expired, or its grant ended.
    case unknown
    /// The token was exchanged before: the grant (as it was) is revoked.
    case reused(StoredOpenIDGrant)
    /// The check refused it (another client presented it): nothing changed.
    case refused
    /// The replacement is the grant's refresh token now; the grant as it is after the rotation.
    case rotated(StoredOpenIDGrant)
}
