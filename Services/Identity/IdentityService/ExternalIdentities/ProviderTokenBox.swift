import Crypto
import Foundation
import KontoModel
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
        Self.seal(try! JSONEncoder().encode(token), key: refreshTokenKey, binding: accountId + "\u{0}" + identityId)
    }

    func open(_ sealed: [UInt8], accountId: String, identityId: String) -> RefreshToken? {
        Self.open(sealed, key: refreshTokenKey, binding: accountId + "\u{0}" + identityId).flatMap { try? JSONDecoder().decode(RefreshToken.self, from: $0) }
    }

    func seal(_ signUp: PendingExternalSignUp) -> String {
        Base64URL.encode(Self.seal(try! JSONEncoder().encode(signUp), key: signUpKey, binding: "sign-up"))
    }

    func open(signUp token: String) -> PendingExternalSignUp? {
        guard token.utf8.count <= 8_192, let sealed = Base64URL.decodeIfValid(token) else { return nil }
        return Self.open(sealed, key: signUpKey, binding: "sign-up").flatMap { try? JSONDecoder().decode(PendingExternalSignUp.self, from: $0) }
    }

    private static func seal(_ data: Data, key: SymmetricKey, binding: String) -> [UInt8] {
        // AES.GCM.seal fails only for a key of another size than 128, 192 or 256 bits; the derived key is 256, and
        // `combined` is nil only for nonces other than the 12-byte ones seal makes.
        guard let box = try? AES.GCM.seal(data, using: key, authenticating: Array(binding.utf8)), let combined = box.combined else {
            preconditionFailure("AES-GCM sealing failed")
        }
        return Array(combined)
    }

    private static func open(_ sealed: [UInt8], key: SymmetricKey, binding: String) -> Data? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed) else { return nil }
        return try? AES.GCM.open(box, using: key, authenticating: Array(binding.utf8))
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
