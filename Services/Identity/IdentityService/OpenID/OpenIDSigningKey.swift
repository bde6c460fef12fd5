import Crypto
import CryptoExtras
import Foundation
import JWTKit
import KontoContracts

/// One of the deployment's signing keys for the tokens Konto issues as an OpenID Provider: a P-256 key (ES256) or an
/// RSA key of at least 2048 bits (RS256), read from a PEM file (PKCS#8, SEC1 or PKCS#1). Its `kid` is its RFC 7638
/// thumbprint, so the same key has the same id on every replica and after every restart, with nothing to configure.
public struct OpenIDSigningKey: Sendable {
    public enum Material: Sendable {
        case es256(ES256PrivateKey)
        case rs256(JWTKit.Insecure.RSA.PrivateKey)
    }

    public let material: Material
    /// Its public half as published in the JWK Set.
    public let publicKey: IdentityJSONWebKey
    public var keyId: String { publicKey.kid }
    public var algorithm: String { publicKey.alg }

    /// - Throws: a problem a person can act on (the PEM is no private key, a curve other than P-256, RSA under 2048 bits).
    public init(pem: String) throws(OpenIDKeyProblem) {
        if let key = try? ES256PrivateKey(pem: pem), let (x, y) = key.publicKey.parameters {
            material = .es256(key)
            publicKey = Self.jwk(kty: "EC", alg: "ES256", members: ["crv": "P-256", "x": x, "y": y])
        } else if pem.contains("EC PRIVATE KEY") || (try? P384.Signing.PrivateKey(pemRepresentation: pem)) != nil
            || (try? P521.Signing.PrivateKey(pemRepresentation: pem)) != nil {
            throw OpenIDKeyProblem("an EC key on a curve other than P-256 (ES256 signs with P-256 only)")
        } else if let rsa = try? _RSA.Signing.PrivateKey(unsafePEMRepresentation: pem) {
            // Read without the library's own floor, so a short key is named as such rather than as no key.
            guard rsa.keySizeInBits >= 2048, let key = try? JWTKit.Insecure.RSA.PrivateKey(pem: pem),
                  let primitives = try? key.publicKey.getKeyPrimitives()
            else {
                throw OpenIDKeyProblem("an RSA key of \(rsa.keySizeInBits) bits (RS256 needs at least 2048)")
            }
            material = .rs256(key)
            publicKey = Self.jwk(kty: "RSA", alg: "RS256", members: [
                "n": Self.base64URL(Self.unsigned(primitives.modulus)), "e": Self.base64URL(Self.unsigned(primitives.publicExponent)),
            ])
        } else {
            throw OpenIDKeyProblem("not a PEM private key (a P-256 or RSA key, e.g. `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`)")
        }
    }

    /// The JWK with its RFC 7638 thumbprint as `kid`: SHA-256 of the required members, sorted, without whitespace.
    static func jwk(kty: String, alg: String, members: [String: String]) -> IdentityJSONWebKey {
        let kid = thumbprint(kty: kty, members: members)
        return IdentityJSONWebKey(kty: kty, kid: kid, alg: alg, crv: members["crv"], x: members["x"], y: members["y"], n: members["n"], e: members["e"])
    }

    /// RFC 7638 section 3: the required members (here `kty` and the key's own), in lexicographic order, as compact JSON.
    /// The values are base64url and curve names: nothing in them needs escaping.
    static func thumbprint(kty: String, members: [String: String]) -> String {
        var all = members
        all["kty"] = kty
        let json = "{" + all.keys.sorted().map { "\"\($0)\":\"\(all[$0]!)\"" }.joined(separator: ",") + "}"
        return base64URL(Data(SHA256.hash(data: Data(json.utf8))))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A big-endian unsigned integer without leading zero bytes (JWA section 6.3.1).
    static func unsigned(_ data: Data) -> Data {
        let bytes = data.drop { $0 == 0 }
        return bytes.isEmpty ? Data([0]) : Data(bytes)
    }
}

/// Why a signing key cannot be used.
public struct OpenIDKeyProblem: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
