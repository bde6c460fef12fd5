import KontoContracts

/// OpenID Connect Discovery 1.0's provider metadata (and RFC 8414's): where the endpoints are and what Konto supports,
/// which is what OAuth 2.1 and the Security BCP leave: the code flow with PKCE S256, no implicit or hybrid flow, no
/// request objects, the `iss` authorization response parameter (RFC 9207).
struct OpenIDDiscovery: Encodable, Sendable {
    var issuer: String
    var authorizationEndpoint: String
    var tokenEndpoint: String
    var userinfoEndpoint: String
    var jwksURI: String
    var revocationEndpoint: String
    var introspectionEndpoint: String
    var endSessionEndpoint: String
    var responseTypesSupported = ["code"]
    var responseModesSupported = ["query"]
    var grantTypesSupported = ["authorization_code", "refresh_token"]
    var subjectTypesSupported = ["public", "pairwise"]
    var idTokenSigningAlgValuesSupported: [String]
    var scopesSupported = ["openid", "profile", "email", "offline_access"]
    var claimsSupported = [
        "sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "email", "email_verified", "name", "given_name",
        "family_name", "middle_name", "nickname", "birthdate", "gender",
    ]
    var tokenEndpointAuthMethodsSupported = ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]
    var tokenEndpointAuthSigningAlgValuesSupported = ["ES256", "RS256"]
    var revocationEndpointAuthMethodsSupported = ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]
    var introspectionEndpointAuthMethodsSupported = ["client_secret_basic", "client_secret_post", "private_key_jwt"]
    var codeChallengeMethodsSupported = ["S256"]
    var acrValuesSupported = ["aal1", "aal2"]
    var promptValuesSupported = ["none", "login", "consent"]
    var claimsParameterSupported = false
    var requestParameterSupported = false
    var requestURIParameterSupported = false
    var authorizationResponseIssParameterSupported = true

    init(issuer: String, keys: [IdentityJSONWebKey]) {
        self.issuer = issuer
        authorizationEndpoint = issuer + "/oauth2/authorize"
        tokenEndpoint = issuer + "/oauth2/token"
        userinfoEndpoint = issuer + "/oauth2/userinfo"
        jwksURI = issuer + "/oauth2/jwks"
        revocationEndpoint = issuer + "/oauth2/revoke"
        introspectionEndpoint = issuer + "/oauth2/introspect"
        endSessionEndpoint = issuer + "/oauth2/logout"
        var algorithms: [String] = []
        for key in keys where !algorithms.contains(key.alg) {
            algorithms.append(key.alg)
        }
        idTokenSigningAlgValuesSupported = algorithms
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case userinfoEndpoint = "userinfo_endpoint"
        case jwksURI = "jwks_uri"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case endSessionEndpoint = "end_session_endpoint"
        case responseTypesSupported = "response_types_supported"
        case responseModesSupported = "response_modes_supported"
        case grantTypesSupported = "grant_types_supported"
        case subjectTypesSupported = "subject_types_supported"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case scopesSupported = "scopes_supported"
        case claimsSupported = "claims_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tokenEndpointAuthSigningAlgValuesSupported = "token_endpoint_auth_signing_alg_values_supported"
        case revocationEndpointAuthMethodsSupported = "revocation_endpoint_auth_methods_supported"
        case introspectionEndpointAuthMethodsSupported = "introspection_endpoint_auth_methods_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case acrValuesSupported = "acr_values_supported"
        case promptValuesSupported = "prompt_values_supported"
        case claimsParameterSupported = "claims_parameter_supported"
        case requestParameterSupported = "request_parameter_supported"
        case requestURIParameterSupported = "request_uri_parameter_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
    }
}
