import Crypto
import Foundation
import KontoWire

/// Seals a TOTP secret or a passkey's public key for storage (AES-GCM under a key derived from the deployment's secret for this purpose
/// alone), bound to its account and factor: a database dump holds no usable secret, and a sealed secret moved to
/// another row does not open.
public struct FactorSecretBox: Sendable {
    private let key: SymmetricKey
    /// Signs passkey challenges (``PasskeyChallenge``): a key of its own purpose.
    let challengeKey: SymmetricKey
    /// Digests mailed sign-in codes (``EmailCode``): a key of its own purpose.
    private let emailCodeKey: SymmetricKey
    /// Digests recovery codes and client addresses and device markers: low-entropy values a plain hash would give
    /// away (every IPv4 address is hashed in seconds, 60-bit codes are within a GPU's reach). Each its own purpose.
    private let recoveryCodeKey: SymmetricKey
    private let clientKey: SymmetricKey
    /// Keys the OpenID Provider's pairwise subjects (``OpenIDTokenIssuer/subject(accountId:for:)``): of the data key,
    /// so every replica computes the same `sub`, for this purpose alone.
    let openIDPairwiseKey: SymmetricKey

    public init(secret: WireSecret) {
        openIDPairwiseKey = secret.derivedKey(purpose: "konto.identity.oidc-pairwise.v1")
        key = secret.derivedKey(purpose: "konto.identity.factor-secrets.v1")
        challengeKey = secret.derivedKey(purpose: "konto.identity.passkey-challenges.v1")
        emailCodeKey = secret.derivedKey(purpose: "konto.identity.email-codes.v1")
        recoveryCodeKey = secret.derivedKey(purpose: "konto.identity.recovery-codes.v1")
        clientKey = secret.derivedKey(purpose: "konto.identity.clients.v1")
    }

    /// What is stored of a recovery code: an HMAC of its normalized form under the data key, bound to the account.
    func recoveryCodeDigest(_ code: String, accountId: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array((accountId + "\u{0}" + RecoveryCodes.normalized(code)).utf8), using: recoveryCodeKey))
    }

    /// What is stored of a client (`address:…`, `device:…`) in known clients and failure keys: an HMAC under the data
    /// key, so a dump of the tables names no address.
    func clientDigest(_ text: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: clientKey))
    }

    /// What is stored of a mailed sign-in code: an HMAC under the deployment's key, bound to the account. A plain
    /// hash of 8 digits is undone by trying all 10^8 in seconds; without the key a database dump reveals no code.
    func emailCodeDigest(_ code: String, accountId: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array((accountId + "\u{0}" + code).utf8), using: emailCodeKey))
    }

    /// What is stored of a verification mail's code: as a sign-in code's, under its own label, so neither kind of
    /// code stands for the other.
    func verificationCodeDigest(_ code: String, accountId: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(("verify\u{0}" + accountId + "\u{0}" + code).utf8), using: emailCodeKey))
    }

    func seal(_ secret: String, accountId: String, factorId: String) -> [UInt8] {
        seal(bytes: Array(secret.utf8), accountId: accountId, factorId: factorId)
    }

    func seal(bytes: [UInt8], accountId: String, factorId: String) -> [UInt8] {
        BoundSeal.seal(bytes, key: key, binding: accountId + "\u{0}" + factorId)
    }

    /// The secret; nil when the box was not sealed for this account and factor under this deployment's secret.
    func open(_ sealed: [UInt8], accountId: String, factorId: String) -> String? {
        openBytes(sealed, accountId: accountId, factorId: factorId).flatMap { String(bytes: $0, encoding: .utf8) }
    }

    func openBytes(_ sealed: [UInt8], accountId: String, factorId: String) -> [UInt8]? {
        BoundSeal.open(sealed, key: key, binding: accountId + "\u{0}" + factorId)
    }
}
