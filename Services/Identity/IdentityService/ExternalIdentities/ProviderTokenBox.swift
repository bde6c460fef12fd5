import Crypto
import Foundation
import KontoModel
import KontoWebAuthn
import KontoWire

/// Seals what Identity keeps or hands out of an external sign-in, each under a key derived from the deployment's
/// secret for that purpose alone (AES-GCM):
/// - a provider's refresh token (Apple's, kept to revoke it at deletion), bound to its account and identity: a
///   database dump holds no usable token;
/// - a sign-up to complete (``PendingExternalSignUp``): the verified identity, handed to the client as an opaque
///   token, opened only by Identity and only until it expires.
public struct ProviderTokenBox: Sendable {
    private let refreshTokenKey: SymmetricKey
    private let signUpKey: SymmetricKey

    public init(secret: WireSecret) {
        refreshTokenKey = secret.derivedKey(purpose: "konto.identity.provider-tokens.v1")
        signUpKey = secret.derivedKey(purpose: "konto.identity.external-sign-ups.v1")
    }

    /// A refresh token with the client id it was issued to (revocation must name the same client).
    struct RefreshToken: Codable, Equatable {
        var clientId: String
        var token: String
    }

    func seal(_ token: RefreshToken, accountId: String, identityId: String) -> [UInt8] {
        BoundSeal.seal(Self.json(token), key: refreshTokenKey, binding: accountId + "\u{0}" + identityId)
    }

    func open(_ sealed: [UInt8], accountId: String, identityId: String) -> RefreshToken? {
        BoundSeal.open(sealed, key: refreshTokenKey, binding: accountId + "\u{0}" + identityId).flatMap { try? JSONDecoder().decode(RefreshToken.self, from: Data($0)) }
    }

    func seal(_ signUp: PendingExternalSignUp) -> String {
        Base64URL.encode(BoundSeal.seal(Self.json(signUp), key: signUpKey, binding: "sign-up"))
    }

    func open(signUp token: String) -> PendingExternalSignUp? {
        guard token.utf8.count <= 8_192, let sealed = Base64URL.decodeIfValid(token) else { return nil }
        return BoundSeal.open(sealed, key: signUpKey, binding: "sign-up").flatMap { try? JSONDecoder().decode(PendingExternalSignUp.self, from: Data($0)) }
    }

    /// Plain structs of strings and numbers: their encoding cannot fail.
    private static func json(_ value: some Encodable) -> Data {
        (try? JSONEncoder().encode(value)) ?? Data()
    }
}

/// A first external sign-in waiting for the values its account needs: what was verified, until when.
struct PendingExternalSignUp: Codable, Equatable {
    /// Unique: the sign-up is completed once (remembered like a nonce until it expires).
    var id: String
    var identity: VerifiedIdentity
    var name: PersonName?
    var refreshToken: ProviderTokenBox.RefreshToken?
    var expiresAt: Timestamp
}
