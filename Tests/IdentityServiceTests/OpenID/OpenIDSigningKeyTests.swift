import Crypto
import CryptoExtras
import Foundation
@testable import IdentityService
import JWTKit
import KontoContracts
import Testing

/// The OpenID Provider's signing keys: read from PEM, named by their RFC 7638 thumbprint, published as JWKs that a
/// library no one here wrote (jwt-kit) verifies Konto's signatures with.
@Suite("OpenID Provider: signing keys")
struct OpenIDSigningKeyTests {
    /// RFC 7638 section 3.1's example key and its thumbprint.
    static let rfcModulus = "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
    static let rfcThumbprint = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"

    @Test("the thumbprint is RFC 7638's, computed as its example computes it")
    func thumbprint() {
        #expect(OpenIDSigningKey.thumbprint(kty: "RSA", members: ["n": Self.rfcModulus, "e": "AQAB"]) == Self.rfcThumbprint)
    }

    @Test("a P-256 key signs ES256 and an RSA key RS256; each published JWK, read by jwt-kit, verifies what the private key signed, and a token of another key fails", arguments: ["ES256", "RS256"])
    func publishedKeysVerify(algorithm: String) async throws {
        let pem = algorithm == "ES256" ? P256.Signing.PrivateKey().pemRepresentation : try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
        let key = try OpenIDSigningKey(pem: pem)
        #expect(key.algorithm == algorithm && key.publicKey.use == "sig")
        // The same key read again has the same id: nothing to configure per replica.
        #expect(try OpenIDSigningKey(pem: pem).keyId == key.keyId)
        // Never a private member.
        let published = String(decoding: try JSONEncoder().encode(["keys": [key.publicKey]]), as: UTF8.self)
        for member in ["\"d\"", "\"p\"", "\"q\"", "\"dp\""] { #expect(!published.contains(member)) }

        struct Claims: JWTPayload {
            var sub: SubjectClaim
            func verify(using algorithm: some JWTAlgorithm) throws {}
        }
        let signer = JWTKeyCollection()
        switch key.material {
        case .es256(let privateKey): await signer.add(ecdsa: privateKey, kid: JWKIdentifier(string: key.keyId))
        case .rs256(let privateKey): await signer.add(rsa: privateKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: key.keyId))
        }
        let token = try await signer.sign(Claims(sub: "account-1"), kid: JWKIdentifier(string: key.keyId))
        let verifier = try await JWTKeyCollection().add(jwksJSON: published)
        #expect(try await verifier.verify(token, as: Claims.self).sub.value == "account-1")

        let other = try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        let otherVerifier = try await JWTKeyCollection().add(jwksJSON: String(decoding: try JSONEncoder().encode(["keys": [other.publicKey]]), as: UTF8.self))
        await #expect(throws: (any Error).self) { _ = try await otherVerifier.verify(token, as: Claims.self) }
    }

    @Test("what is refused, and why: another curve, a short RSA key, no key at all, the same key twice, an unreadable file")
    func refused() throws {
        func problem(_ pem: String) -> String? {
            do {
                _ = try OpenIDSigningKey(pem: pem)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(problem(P384.Signing.PrivateKey().pemRepresentation)?.contains("other than P-256") == true)
        #expect(problem(try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).pemRepresentation)?.contains("1024 bits") == true)
        #expect(problem("not a key")?.contains("not a PEM private key") == true)
        // A public key is no signing key.
        #expect(problem(P256.Signing.PrivateKey().publicKey.pemRepresentation)?.contains("not a PEM private key") == true)

        let key = try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        #expect(throws: OpenIDKeyProblem.self) { try OpenIDSigningKeys([key, key]) }
        #expect(throws: OpenIDKeyProblem.self) { try OpenIDSigningKeys([]) }
        #expect(throws: OpenIDKeyProblem.self) { try OpenIDSigningKeys.load(paths: ["/nonexistent/konto-key.pem"]) }
    }

    @Test("rotation: every key published, the first of each algorithm signs")
    func rotation() throws {
        let current = try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        let next = try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        let rsa = try OpenIDSigningKey(pem: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation)
        let keys = try OpenIDSigningKeys([current, next, rsa])
        #expect(keys.published.map(\.kid) == [current.keyId, next.keyId, rsa.keyId])
        #expect(keys.signing("ES256")?.keyId == current.keyId && keys.signing("RS256")?.keyId == rsa.keyId)
        #expect(try OpenIDSigningKeys([current]).signing("RS256") == nil)
    }
}
