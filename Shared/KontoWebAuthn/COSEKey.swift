import Crypto
import CryptoExtras

/// A credential public key in COSE form (RFC 9052/9053, as WebAuthn's attested credential data carries it), parsed
/// into a key that verifies assertion signatures.
public struct COSEKey: Sendable {
    /// The COSE algorithms Konto verifies, in the order registration options offer them.
    public enum Algorithm: Int, Sendable, CaseIterable {
        /// ECDSA over P-256 with SHA-256 (every platform authenticator).
        case es256 = -7
        /// Ed25519.
        case edDSA = -8
        /// RSASSA-PSS with SHA-256.
        case ps256 = -37
        /// RSASSA-PKCS1-v1_5 with SHA-256 (Windows Hello).
        case rs256 = -257
    }

    private enum Key: Sendable {
        case p256(P256.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey, _RSA.Signing.Padding)
    }

    /// The largest RSA modulus accepted: verifying with a larger one costs more than any authenticator justifies.
    public static let maximumRSABits = 4_096

    public let algorithm: Algorithm
    private let key: Key

    /// Parses a COSE key map; the key must be complete, on its curve (P-256), and of a supported algorithm.
    public init(_ value: CBORValue) throws(WebAuthnError) {
        guard case .map = value else { throw WebAuthnError(.malformed, "the credential public key is not a COSE key map") }
        guard let keyType = value[1]?.int else { throw WebAuthnError(.malformed, "the COSE key has no key type (1)") }
        guard let algorithmLabel = value[3]?.int else { throw WebAuthnError(.malformed, "the COSE key has no algorithm (3)") }
        guard let algorithm = Algorithm(rawValue: algorithmLabel) else {
            throw WebAuthnError(.unsupportedAlgorithm, "COSE algorithm \(algorithmLabel) is not supported")
        }
        self.algorithm = algorithm
        switch algorithm {
        case .es256:
            guard keyType == 2 else { throw WebAuthnError(.malformed, "ES256 needs an EC2 key (kty 2), not kty \(keyType)") }
            guard value[-1]?.int == 1 else { throw WebAuthnError(.unsupportedAlgorithm, "ES256 needs the P-256 curve (crv 1)") }
            guard let x = value[-2]?.bytes, let y = value[-3]?.bytes, x.count == 32, y.count == 32 else {
                throw WebAuthnError(.malformed, "an EC2 key needs 32-byte x and y coordinates")
            }
            do {
                key = .p256(try P256.Signing.PublicKey(x963Representation: [0x04] + x + y))
            } catch {
                throw WebAuthnError(.malformed, "the EC2 key's point is not on P-256")
            }
        case .edDSA:
            guard keyType == 1 else { throw WebAuthnError(.malformed, "EdDSA needs an OKP key (kty 1), not kty \(keyType)") }
            guard value[-1]?.int == 6 else { throw WebAuthnError(.unsupportedAlgorithm, "EdDSA is verified on Ed25519 (crv 6) only") }
            guard let x = value[-2]?.bytes, x.count == 32 else { throw WebAuthnError(.malformed, "an Ed25519 key needs a 32-byte x") }
            do {
                key = .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: x))
            } catch {
                throw WebAuthnError(.malformed, "the Ed25519 key does not decode")
            }
        case .rs256, .ps256:
            guard keyType == 3 else { throw WebAuthnError(.malformed, "RSA algorithms need an RSA key (kty 3), not kty \(keyType)") }
            guard let n = value[-1]?.bytes, let e = value[-2]?.bytes, !n.isEmpty, !e.isEmpty, e.count <= 8 else {
                throw WebAuthnError(.malformed, "an RSA key needs a modulus n (-1) and an exponent e (-2)")
            }
            let bits = (n.drop { $0 == 0 }).count * 8
            guard bits <= Self.maximumRSABits else {
                throw WebAuthnError(.unsupportedAlgorithm, "RSA moduli over \(Self.maximumRSABits) bits are not verified")
            }
            do {
                key = .rsa(try _RSA.Signing.PublicKey(n: n, e: e), algorithm == .rs256 ? .insecurePKCS1v1_5 : .PSS)
            } catch {
                // swift-crypto refuses moduli under 2048 bits, as WebAuthn's RS256 users (Windows Hello) never send.
                throw WebAuthnError(.unsupportedAlgorithm, "the RSA key is refused (under 2048 bits or not a valid key)")
            }
        }
    }

    /// Parses COSE key bytes (exactly one CBOR item).
    public init(bytes: [UInt8]) throws(WebAuthnError) {
        let value: CBORValue
        do {
            value = try CBORDecoder.decode(bytes)
        } catch {
            throw WebAuthnError(.malformed, "the credential public key: \(error)")
        }
        try self.init(value)
    }

    /// Whether `signature` (DER for ECDSA, as WebAuthn sends it) signs `data` under this key.
    public func isValidSignature(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        switch key {
        case .p256(let key):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: data)
        case .ed25519(let key):
            return key.isValidSignature(signature, for: data)
        case .rsa(let key, let padding):
            return key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: data, padding: padding)
        }
    }
}
