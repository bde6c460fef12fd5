/// A public signing key as a JSON Web Key (RFC 7517): what relying parties verify Konto's tokens with.
public struct IdentityJSONWebKey: Codable, Sendable, Hashable {
    /// `EC` or `RSA`.
    public var kty: String
    /// The key's RFC 7638 thumbprint (SHA-256, base64url).
    public var kid: String
    /// Always `sig`.
    public var use: String
    /// `ES256` or `RS256`.
    public var alg: String
    /// EC: the curve (`P-256`) and the point's coordinates, base64url.
    public var crv: String?
    public var x: String?
    public var y: String?
    /// RSA: the modulus and the public exponent, base64url, without leading zeros.
    public var n: String?
    public var e: String?

    public init(kty: String, kid: String, use: String = "sig", alg: String, crv: String? = nil, x: String? = nil, y: String? = nil, n: String? = nil, e: String? = nil) {
        self.kty = kty
        self.kid = kid
        self.use = use
        self.alg = alg
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
    }
}

/// Asks for Konto's OpenID Provider keys (``IdentityContract/openIDKeys``).
public struct IdentityOpenIDKeysRequest: Codable, Sendable, Equatable {
    public init() {}
}

/// The deployment's published signing keys (a JWK Set), the signing one first; none while Konto is no OpenID Provider.
public struct IdentityOpenIDKeys: Codable, Sendable, Equatable {
    /// The issuer its tokens name (`KONTO_IDENTITY_OIDC_ISSUER`); nil: Konto is no OpenID Provider here.
    public var issuer: String?
    public var keys: [IdentityJSONWebKey]

    public init(issuer: String?, keys: [IdentityJSONWebKey]) {
        self.issuer = issuer
        self.keys = keys
    }
}
