import Foundation
import JWTKit

/// The claims of an ID token Konto reads (OpenID Connect Core §2, and Apple's). Checked by
/// ``IdentityTokenVerifier`` after the signature, against Identity's clock: ``verify(using:)`` does nothing.
struct ExternalIdentityClaims: JWTPayload {
    var iss: String?
    var sub: String?
    var aud: AudienceClaim?
    var azp: String?
    var exp: Double?
    var iat: Double?
    var nonce: String?
    var email: String?
    /// A boolean, or (Apple) the string "true" or "false".
    var emailVerified: Bool?
    var name: String?
    var givenName: String?
    var familyName: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, azp, exp, iat, nonce, email, name
        case emailVerified = "email_verified"
        case givenName = "given_name"
        case familyName = "family_name"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try? container.decodeIfPresent(String.self, forKey: .iss)
        sub = try? container.decodeIfPresent(String.self, forKey: .sub)
        aud = try? container.decodeIfPresent(AudienceClaim.self, forKey: .aud)
        azp = try? container.decodeIfPresent(String.self, forKey: .azp)
        exp = try? container.decodeIfPresent(Double.self, forKey: .exp)
        iat = try? container.decodeIfPresent(Double.self, forKey: .iat)
        nonce = try? container.decodeIfPresent(String.self, forKey: .nonce)
        email = try? container.decodeIfPresent(String.self, forKey: .email)
        if let flag = try? container.decodeIfPresent(Bool.self, forKey: .emailVerified) {
            emailVerified = flag
        } else if let text = try? container.decodeIfPresent(String.self, forKey: .emailVerified) {
            emailVerified = text == "true" ? true : (text == "false" ? false : nil)
        }
        name = try? container.decodeIfPresent(String.self, forKey: .name)
        givenName = try? container.decodeIfPresent(String.self, forKey: .givenName)
        familyName = try? container.decodeIfPresent(String.self, forKey: .familyName)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(iss, forKey: .iss)
        try container.encodeIfPresent(sub, forKey: .sub)
        try container.encodeIfPresent(aud, forKey: .aud)
        try container.encodeIfPresent(nonce, forKey: .nonce)
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
