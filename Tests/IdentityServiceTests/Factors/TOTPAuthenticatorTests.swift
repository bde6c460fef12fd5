import Foundation
@testable import IdentityService
import KontoModel
import KontoTestSupport
import KontoWire
import Testing

@Suite("TOTP, recovery codes and sealed secrets")
struct TOTPAuthenticatorTests {
    /// RFC 6238's SHA-1 key.
    static let rfcSecret = "12345678901234567890"

    struct Vector: Sendable, CustomTestStringConvertible {
        let seconds: Int64
        let code: String
        var testDescription: String { "T=\(seconds)" }
    }

    /// RFC 6238 appendix B (SHA-1), the last six of its eight digits (the same HOTP value, modulo 10^6).
    static let vectors = [
        Vector(seconds: 59, code: "287082"),
        Vector(seconds: 1_111_111_109, code: "081804"),
        Vector(seconds: 1_111_111_111, code: "050471"),
        Vector(seconds: 1_234_567_890, code: "005924"),
        Vector(seconds: 2_000_000_000, code: "279037"),
        Vector(seconds: 20_000_000_000, code: "353130"),
    ]

    @Test("RFC 6238's test vectors", arguments: vectors)
    func rfcVectors(vector: Vector) {
        let time = Timestamp(milliseconds: vector.seconds * 1_000)
        #expect(TOTPAuthenticator.code(secret: Self.rfcSecret, step: TOTPAuthenticator.step(at: time)) == vector.code)
        #expect(TOTPAuthenticator.matchingStep(of: vector.code, secret: Self.rfcSecret, at: time) == TOTPAuthenticator.step(at: time))
    }

    @Test("a code is accepted one step either side, not two; malformed codes are refused")
    func window() {
        let time = Timestamp(milliseconds: 1_111_111_111_000)
        let step = TOTPAuthenticator.step(at: time)
        for offset: Int64 in [-1, 0, 1] {
            let code = TOTPAuthenticator.code(secret: Self.rfcSecret, step: step + offset)
            #expect(TOTPAuthenticator.matchingStep(of: code, secret: Self.rfcSecret, at: time) == step + offset)
        }
        for offset: Int64 in [-2, 2, -100] {
            let code = TOTPAuthenticator.code(secret: Self.rfcSecret, step: step + offset)
            let matched = TOTPAuthenticator.matchingStep(of: code, secret: Self.rfcSecret, at: time)
            // A far code may collide with a near one (1 in 10^6 each); it is then that step, never the far one.
            #expect(matched == nil || (step - 1...step + 1).contains(matched!))
        }
        for malformed in ["", "12345", "1234567", "12345a", "１２３４５６", " 081804"] {
            #expect(TOTPAuthenticator.matchingStep(of: malformed, secret: Self.rfcSecret, at: time) == nil, "\(malformed)")
        }
    }

    @Test("secrets: 32 base32 characters, distinct; given to apps in base32 inside an otpauth URI")
    func secrets() {
        let secrets = (0..<100).map { _ in TOTPAuthenticator.generateSecret() }
        #expect(Set(secrets).count == 100)
        #expect(secrets.allSatisfy { $0.count == 32 && $0.allSatisfy { "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".contains($0) } })
        #expect(TOTPAuthenticator.base32(Self.rfcSecret) == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        let uri = TOTPAuthenticator(issuer: "Konto").provisioningURI(secret: Self.rfcSecret, label: "ada@example.org")
        #expect(uri.hasPrefix("otpauth://totp/Konto:ada@example.org?"))
        #expect(uri.contains("secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"))
        #expect(uri.contains("issuer=Konto"))
    }

    @Test("recovery codes: ten distinct 60-bit codes, matched however they are typed")
    func recoveryCodes() {
        let codes = RecoveryCodes.generate()
        #expect(codes.count == 10 && Set(codes).count == 10)
        #expect(codes.allSatisfy { $0.count == 14 && $0.split(separator: "-").map(\.count) == [4, 4, 4] })
        let code = codes[0]
        let box = FactorSecretBox(secret: WireSecret("a deployment's data key, 32 bytes or more"))
        let digest = { (typed: String) in box.recoveryCodeDigest(typed, accountId: "a1") }
        #expect(digest(code) == digest(code.uppercased()))
        #expect(digest(code) == digest(code.replacingOccurrences(of: "-", with: " ")))
        #expect(digest(code) != digest(codes[1]))
        #expect(digest(code).count == 32)
        #expect(RecoveryCodes.legacyHash(code) == RecoveryCodes.legacyHash(code.uppercased()))
        #expect(RecoveryCodes.legacyHash(code) != digest(code))
    }

    @Test("a sealed secret opens for its account and factor only, and not under another deployment's secret")
    func sealedSecrets() {
        let box = FactorSecretBox(secret: WireSecret("a deployment secret of sixteen bytes or more"))
        let sealed = box.seal(Self.rfcSecret, accountId: "a1", factorId: "f1")
        #expect(!String(decoding: sealed, as: UTF8.self).contains(Self.rfcSecret))
        #expect(box.open(sealed, accountId: "a1", factorId: "f1") == Self.rfcSecret)
        #expect(box.open(sealed, accountId: "a2", factorId: "f1") == nil)
        #expect(box.open(sealed, accountId: "a1", factorId: "f2") == nil)
        #expect(FactorSecretBox(secret: WireSecret("another deployment secret, sixteen+")).open(sealed, accountId: "a1", factorId: "f1") == nil)
        var tampered = sealed
        tampered[tampered.count / 2] ^= 1
        #expect(box.open(tampered, accountId: "a1", factorId: "f1") == nil)
        #expect(box.open([1, 2, 3], accountId: "a1", factorId: "f1") == nil)
    }

    static let python = ProcessInfo.processInfo.environment["KONTO_PYOTP_PYTHON"]
    static let onCI = ProcessInfo.processInfo.environment["CI"] != nil

    /// The foreign judge: PyPI's pyotp reads the otpauth URI Konto made and computes the codes at given times, which
    /// must be Konto's codes for those steps (and Konto must accept them).
    @Test("pyotp, reading Konto's otpauth URI, computes the codes Konto accepts", .enabled(if: python != nil || onCI, "KONTO_PYOTP_PYTHON is not set (scripts/test.sh sets it)"))
    func pyotpJudge() async throws {
        guard let python = Self.python else {
            Issue.record("CI is set, but KONTO_PYOTP_PYTHON is not: CI runs the tests through scripts/test.sh, which installs pyotp and sets it")
            return
        }
        let secret = TOTPAuthenticator.generateSecret()
        let uri = TOTPAuthenticator(issuer: "Konto").provisioningURI(secret: secret, label: "ada@example.org")
        let times: [Int64] = [59, 1_111_111_109, 1_800_000_000, 1_800_000_029, 1_800_000_030, 4_102_444_800]
        let script = """
            import sys, pyotp
            totp = pyotp.parse_uri(sys.argv[1])
            print(" ".join(totp.at(int(t)) for t in sys.argv[2:]))
            """
        let run = try await ServiceProcess.run(python, arguments: ["-c", script, uri] + times.map(String.init))
        #expect(run.status == 0, "\(run.standardError)")
        let codes = run.standardOutput.split(whereSeparator: \.isWhitespace).map(String.init)
        #expect(codes.count == times.count)
        for (time, code) in zip(times, codes) {
            let at = Timestamp(milliseconds: time * 1_000)
            #expect(TOTPAuthenticator.code(secret: secret, step: TOTPAuthenticator.step(at: at)) == code, "T=\(time)")
            #expect(TOTPAuthenticator.matchingStep(of: code, secret: secret, at: at) != nil, "T=\(time)")
        }
    }
}
