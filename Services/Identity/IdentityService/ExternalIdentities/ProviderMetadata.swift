/// What a provider's discovery document (`/.well-known/openid-configuration`, OpenID Connect Discovery 1.0 §3) says
/// that Konto uses.
public struct ProviderMetadata: Sendable, Equatable, Decodable {
    public var issuer: String
    public var authorizationEndpoint: String?
    public var tokenEndpoint: String?
    public var jwksURI: String
    public var revocationEndpoint: String?
    public var signingAlgorithms: [String]?
    public var codeChallengeMethods: [String]?

    public init(
        issuer: String, authorizationEndpoint: String? = nil, tokenEndpoint: String? = nil, jwksURI: String,
        revocationEndpoint: String? = nil, signingAlgorithms: [String]? = nil, codeChallengeMethods: [String]? = nil
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.revocationEndpoint = revocationEndpoint
        self.signingAlgorithms = signingAlgorithms
        self.codeChallengeMethods = codeChallengeMethods
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
        case signingAlgorithms = "id_token_signing_alg_values_supported"
        case codeChallengeMethods = "code_challenge_methods_supported"
    }
}
