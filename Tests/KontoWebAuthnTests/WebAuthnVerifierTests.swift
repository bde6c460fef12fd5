import Crypto
import Foundation
@testable import KontoWebAuthn
import KontoTestSupport
import Testing

/// The verifier against a software authenticator: correct ceremonies pass, and each way a hostile client can depart
/// from one is refused with its own code and no crash.
@Suite("WebAuthn: hostile registrations and assertions")
struct WebAuthnVerifierTests {
    static let origin = "https://accounts.example.org"
    static let verifier = WebAuthnVerifier(relyingParty: .init(id: "example.org", name: "Konto", origins: [origin]))
    static let challenge = (0..<32).map { _ in UInt8.random(in: 0 ... 255) }

    static func authenticator(_ algorithm: SoftwareAuthenticator.Algorithm = .es256) -> SoftwareAuthenticator {
        SoftwareAuthenticator(rpId: "example.org", origin: origin, algorithm: algorithm)
    }

    static func register(
        _ authenticator: SoftwareAuthenticator,
        attestation: SoftwareAuthenticator.Attestation = .none,
        publicKey: TestCBOR? = nil,
        tampering: SoftwareAuthenticator.Tampering = .init(),
        requireUserVerification: Bool = true
    ) throws(WebAuthnError) -> WebAuthnVerifier.Registration {
        let response = authenticator.register(challenge: challenge, attestation: attestation, publicKey: publicKey, tampering: tampering)
        return try verifier.verifyRegistration(
            clientDataJSON: response.clientDataJSON,
            attestationObject: response.attestationObject,
            expectedChallenge: challenge,
            requireUserVerification: requireUserVerification
        )
    }

    static func code(_ body: () throws(WebAuthnError) -> some Any) -> WebAuthnError.Code? {
        do {
            _ = try body()
            return nil
        } catch {
            return error.code
        }
    }

    @Test("a software passkey registers (none and packed self-attestation) and signs in, ES256 and Ed25519",
          arguments: [SoftwareAuthenticator.Algorithm.es256, .edDSA], [SoftwareAuthenticator.Attestation.none, .packedSelf])
    func roundTrip(algorithm: SoftwareAuthenticator.Algorithm, attestation: SoftwareAuthenticator.Attestation) throws {
        let authenticator = Self.authenticator(algorithm)
        let registration = try Self.register(authenticator, attestation: attestation)
        #expect(registration.credentialId == authenticator.credentialId)
        #expect(registration.publicKey == authenticator.publicKey.encoded)
        #expect(registration.userVerified)
        let key = try COSEKey(bytes: registration.publicKey)
        var count = registration.signCount
        for _ in 0..<3 {
            let assertion = authenticator.assert(challenge: Self.challenge)
            let result = try Self.verifier.verifyAssertion(
                clientDataJSON: assertion.clientDataJSON, authenticatorData: assertion.authenticatorData,
                signature: assertion.signature, expectedChallenge: Self.challenge, publicKey: key,
                storedSignCount: count, requireUserVerification: true
            )
            #expect(result.signCount > count)
            count = result.signCount
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let tampering: SoftwareAuthenticator.Tampering
        let expected: WebAuthnError.Code
        var testDescription: String { name }

        init(_ name: String, _ expected: WebAuthnError.Code, _ change: (inout SoftwareAuthenticator.Tampering) -> Void) {
            self.name = name
            self.expected = expected
            var tampering = SoftwareAuthenticator.Tampering()
            change(&tampering)
            self.tampering = tampering
        }
    }

    static let ceremonyCases: [Case] = [
        Case("another origin", .wrongOrigin) { $0.origin = "https://evil.example" },
        Case("a look-alike origin", .wrongOrigin) { $0.origin = "https://accounts.example.org.evil.example" },
        Case("a cross-origin frame", .wrongOrigin) { $0.crossOrigin = true },
        Case("another RP ID", .wrongRelyingParty) { $0.rpId = "evil.example" },
        Case("no user present", .userNotPresent) { $0.userPresent = false },
        Case("no user verification", .userNotVerified) { $0.userVerified = false },
        Case("the other ceremony's type", .wrongType) { $0.type = "webauthn.get" },
    ]

    @Test("registrations departing from the ceremony are refused with their code", arguments: ceremonyCases)
    func hostileRegistration(_ hostile: Case) {
        #expect(Self.code { () throws(WebAuthnError) in try Self.register(Self.authenticator(), tampering: hostile.tampering) } == hostile.expected)
    }

    @Test("assertions departing from the ceremony are refused with their code", arguments: ceremonyCases + [
        Case("a forged signature", .invalidSignature) { $0.forgeSignature = true },
        Case("a counter that went back", .signCountRegression) { $0.signCount = 1 },
        Case("a counter that stood still", .signCountRegression) { $0.signCount = 5 },
    ])
    func hostileAssertion(_ hostile: Case) throws {
        let authenticator = Self.authenticator()
        let key = try COSEKey(bytes: Self.register(authenticator).publicKey)
        var tampering = hostile.tampering
        if tampering.type == "webauthn.get" { tampering.type = "webauthn.create" }
        let assertion = authenticator.assert(challenge: Self.challenge, tampering: tampering)
        #expect(Self.code { () throws(WebAuthnError) in
            try Self.verifier.verifyAssertion(
                clientDataJSON: assertion.clientDataJSON, authenticatorData: assertion.authenticatorData,
                signature: assertion.signature, expectedChallenge: Self.challenge, publicKey: key,
                storedSignCount: 5, requireUserVerification: true
            )
        } == hostile.expected)
    }

    @Test("an answer to another challenge is refused, in both ceremonies")
    func wrongChallenge() throws {
        let authenticator = Self.authenticator()
        let other = (0..<32).map { _ in UInt8.random(in: 0 ... 255) }
        let response = authenticator.register(challenge: other)
        #expect(Self.code { () throws(WebAuthnError) in
            try Self.verifier.verifyRegistration(clientDataJSON: response.clientDataJSON, attestationObject: response.attestationObject, expectedChallenge: Self.challenge, requireUserVerification: true)
        } == .wrongChallenge)
        let key = try COSEKey(bytes: Self.register(authenticator).publicKey)
        let assertion = authenticator.assert(challenge: other)
        #expect(Self.code { () throws(WebAuthnError) in
            try Self.verifier.verifyAssertion(
                clientDataJSON: assertion.clientDataJSON, authenticatorData: assertion.authenticatorData, signature: assertion.signature,
                expectedChallenge: Self.challenge, publicKey: key, storedSignCount: 0, requireUserVerification: true
            )
        } == .wrongChallenge)
    }

    @Test("user verification is optional where the caller says so (a security key as a second factor)")
    func userVerificationOptional() throws {
        var tampering = SoftwareAuthenticator.Tampering()
        tampering.userVerified = false
        let registration = try Self.register(Self.authenticator(), tampering: tampering, requireUserVerification: false)
        #expect(!registration.userVerified)
    }

    @Test("keys Konto does not verify are refused: unknown algorithm, another curve, a short or huge RSA key, a point off the curve")
    func unsupportedKeys() throws {
        let authenticator = Self.authenticator()
        let x = Array(repeating: UInt8(1), count: 32)
        let cases: [(TestCBOR, WebAuthnError.Code)] = [
            (.map([(.int(1), .int(2)), (.int(3), .int(-999))]), .unsupportedAlgorithm),
            (.map([(.int(1), .int(2)), (.int(3), .int(-35)), (.int(-1), .int(2)), (.int(-2), .bytes(x)), (.int(-3), .bytes(x))]), .unsupportedAlgorithm),
            (.map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(2)), (.int(-2), .bytes(x)), (.int(-3), .bytes(x))]), .unsupportedAlgorithm),
            (.map([(.int(1), .int(2)), (.int(3), .int(-7)), (.int(-1), .int(1)), (.int(-2), .bytes(x)), (.int(-3), .bytes(x))]), .malformed),
            (.map([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes([0xC1] + Array(repeating: 0x55, count: 127))), (.int(-2), .bytes([1, 0, 1]))]), .unsupportedAlgorithm),
            (.map([(.int(1), .int(3)), (.int(3), .int(-257)), (.int(-1), .bytes([0xC1] + Array(repeating: 0x55, count: 1_023))), (.int(-2), .bytes([1, 0, 1]))]), .unsupportedAlgorithm),
            (.map([(.int(3), .int(-7))]), .malformed),
            (.map([(.int(1), .int(2))]), .malformed),
            (.map([(.int(1), .int(1)), (.int(3), .int(-8)), (.int(-1), .int(6)), (.int(-2), .bytes([1, 2, 3]))]), .malformed),
            (.array([]), .malformed),
        ]
        for (key, expected) in cases {
            #expect(Self.code { () throws(WebAuthnError) in try Self.register(authenticator, publicKey: key) } == expected, "\(key.encoded.count)-byte key")
        }
    }

    @Test("attestation statements that do not hold are refused")
    func hostileAttestation() throws {
        let authenticator = Self.authenticator()
        var forged = SoftwareAuthenticator.Tampering()
        forged.forgeSignature = true
        #expect(Self.code { () throws(WebAuthnError) in try Self.register(authenticator, attestation: .packedSelf, tampering: forged) } == .invalidAttestation)

        let response = authenticator.register(challenge: Self.challenge)
        guard case .map(let entries) = try CBORDecoder.decode(response.attestationObject) else { Issue.record("not a map"); return }
        let authData = entries.first { $0.key == .text("authData") }!.value.bytes!
        func object(_ format: String, _ statement: TestCBOR) -> [UInt8] {
            TestCBOR.map([(.text("fmt"), .text(format)), (.text("attStmt"), statement), (.text("authData"), .bytes(authData))]).encoded
        }
        let cases: [([UInt8], WebAuthnError.Code)] = [
            (object("none", .map([(.text("sig"), .bytes([1]))])), .invalidAttestation),
            (object("packed", .map([(.text("alg"), .int(-257)), (.text("sig"), .bytes([1]))])), .invalidAttestation),
            (object("packed", .map([(.text("alg"), .int(-7))])), .invalidAttestation),
            (object("packed", .map([(.text("alg"), .int(-7)), (.text("sig"), .bytes([1])), (.text("x5c"), .array([.bytes([1])]))])), .unsupportedAttestation),
            (object("tpm", .map([])), .unsupportedAttestation),
            (object("android-safetynet", .map([])), .unsupportedAttestation),
            (TestCBOR.map([(.text("fmt"), .text("none")), (.text("authData"), .bytes(authData))]).encoded, .malformed),
            (TestCBOR.map([(.text("fmt"), .int(1)), (.text("attStmt"), .map([])), (.text("authData"), .bytes(authData))]).encoded, .malformed),
        ]
        for (attestationObject, expected) in cases {
            #expect(Self.code { () throws(WebAuthnError) in
                try Self.verifier.verifyRegistration(clientDataJSON: response.clientDataJSON, attestationObject: attestationObject, expectedChallenge: Self.challenge, requireUserVerification: true)
            } == expected)
        }
    }

    @Test("malformed authenticator data: trailing bytes, backed up without eligibility, an empty or oversized credential ID")
    func malformedAuthenticatorData() {
        let base = Array(SHA256.hash(data: Array("example.org".utf8))) + [0x05, 0, 0, 0, 1]
        #expect(Self.code { () throws(WebAuthnError) in try AuthenticatorData(base) } == nil)
        #expect(Self.code { () throws(WebAuthnError) in try AuthenticatorData(base + [0]) } == .malformed)
        var backedUp = base
        backedUp[32] |= 0x10
        #expect(Self.code { () throws(WebAuthnError) in try AuthenticatorData(backedUp) } == .malformed)
        var attested = base
        attested[32] |= 0x40
        #expect(Self.code { () throws(WebAuthnError) in try AuthenticatorData(attested + Array(repeating: 0, count: 16) + [0, 0]) } == .malformed)
        #expect(Self.code { () throws(WebAuthnError) in try AuthenticatorData(attested + Array(repeating: 0, count: 16) + [0x04, 0x00] + Array(repeating: 1, count: 1_024)) } == .malformed)
        var extensions = base
        extensions[32] |= 0x80
        #expect(Self.code { () throws(WebAuthnError) in try AuthenticatorData(extensions + TestCBOR.map([(.text("credProtect"), .int(1))]).encoded) } == nil)
        #expect(Self.code { () throws(WebAuthnError) in try AuthenticatorData(extensions + TestCBOR.int(1).encoded) } == .malformed)
    }

    @Test("every prefix of a registration and of an assertion is refused as malformed, never a crash")
    func truncated() throws {
        let authenticator = Self.authenticator()
        let response = authenticator.register(challenge: Self.challenge, attestation: .packedSelf)
        for length in 0..<response.attestationObject.count {
            let code = Self.code { () throws(WebAuthnError) in
                try Self.verifier.verifyRegistration(clientDataJSON: response.clientDataJSON, attestationObject: Array(response.attestationObject.prefix(length)), expectedChallenge: Self.challenge, requireUserVerification: true)
            }
            #expect(code == .malformed, "prefix of \(length) bytes")
        }
        let key = try COSEKey(bytes: Self.register(authenticator).publicKey)
        let assertion = authenticator.assert(challenge: Self.challenge)
        for length in 0..<assertion.authenticatorData.count {
            let code = Self.code { () throws(WebAuthnError) in
                try Self.verifier.verifyAssertion(
                    clientDataJSON: assertion.clientDataJSON, authenticatorData: Array(assertion.authenticatorData.prefix(length)),
                    signature: assertion.signature, expectedChallenge: Self.challenge, publicKey: key, storedSignCount: 0, requireUserVerification: true
                )
            }
            #expect(code == .malformed, "prefix of \(length) bytes")
        }
        for length in 0..<assertion.clientDataJSON.count {
            let code = Self.code { () throws(WebAuthnError) in try WebAuthnVerifier.challenge(inClientData: Array(assertion.clientDataJSON.prefix(length))) }
            #expect(code == .malformed, "client data prefix of \(length) bytes")
        }
    }

    @Test("oversized parts are refused before they are decoded")
    func oversized() throws {
        let authenticator = Self.authenticator()
        let response = authenticator.register(challenge: Self.challenge)
        let huge = TestCBOR.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])), (.text("authData"), .bytes(Array(repeating: 0, count: 17_000)))]).encoded
        #expect(Self.code { () throws(WebAuthnError) in
            try Self.verifier.verifyRegistration(clientDataJSON: response.clientDataJSON, attestationObject: huge, expectedChallenge: Self.challenge, requireUserVerification: true)
        } == .tooLarge)
        #expect(Self.code { () throws(WebAuthnError) in try WebAuthnVerifier.challenge(inClientData: Array(repeating: 0x20, count: 9_000)) } == .tooLarge)
        let key = try COSEKey(bytes: Self.register(authenticator).publicKey)
        let assertion = authenticator.assert(challenge: Self.challenge)
        #expect(Self.code { () throws(WebAuthnError) in
            try Self.verifier.verifyAssertion(
                clientDataJSON: assertion.clientDataJSON, authenticatorData: assertion.authenticatorData, signature: Array(repeating: 1, count: 2_000),
                expectedChallenge: Self.challenge, publicKey: key, storedSignCount: 0, requireUserVerification: true
            )
        } == .tooLarge)
    }

    @Test("random bytes as attestation objects, authenticator data and COSE keys: refused, never a crash")
    func noise() {
        var generator = SystemRandomNumberGenerator()
        // Valid client data, so that every round reaches the attestation object.
        let clientData = Self.authenticator().register(challenge: Self.challenge).clientDataJSON
        for round in 0..<3_000 {
            let bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
            _ = Self.code { () throws(WebAuthnError) in try COSEKey(bytes: bytes) }
            _ = Self.code { () throws(WebAuthnError) in try AuthenticatorData(bytes) }
            _ = Self.code { () throws(WebAuthnError) in
                try Self.verifier.verifyRegistration(clientDataJSON: clientData, attestationObject: bytes, expectedChallenge: Self.challenge, requireUserVerification: round % 2 == 0)
            }
        }
    }
}
