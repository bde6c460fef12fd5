import KontoContracts
import KontoModel

/// RFC 6749 5.1's token response with OpenID Connect's `id_token`, in OAuth's member names.
struct OAuthTokenResponse: Encodable, Sendable {
    var accessToken: String
    var tokenType: String
    var expiresIn: Int
    var refreshToken: String?
    var idToken: String?
    var scope: String

    init(_ tokens: IdentityOpenIDTokens) {
        accessToken = tokens.accessToken.value
        tokenType = tokens.tokenType
        expiresIn = tokens.expiresIn
        refreshToken = tokens.refreshToken?.value
        idToken = tokens.idToken
        scope = tokens.scope
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
    }
}

/// RFC 7662 2.2's introspection response: times as NumericDates.
struct OAuthIntrospection: Encodable, Sendable {
    var active: Bool
    var scope: String?
    var clientId: String?
    var sub: String?
    var tokenType: String?
    var exp: Int64?
    var iat: Int64?
    var iss: String?

    init(_ answer: IdentityOpenIDIntrospection) {
        active = answer.active
        guard answer.active else { return }
        scope = answer.scope
        clientId = answer.clientId
        sub = answer.subject
        tokenType = answer.tokenType
        exp = answer.expiresAt.map { $0.milliseconds / 1_000 }
        iat = answer.issuedAt.map { $0.milliseconds / 1_000 }
        iss = answer.issuer
    }

    enum CodingKeys: String, CodingKey {
        case active, scope, sub, exp, iat, iss
        case clientId = "client_id"
        case tokenType = "token_type"
    }
}
