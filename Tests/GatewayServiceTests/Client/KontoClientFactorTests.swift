import Foundation
import KontoClient
import KontoModel
import KontoTestSupport
import Testing

/// The second factor through the gateway's HTTP API with KontoClient, on the real services and PostgreSQL; the TOTP
/// codes come from PyPI's pyotp reading the otpauth URI the API gave (a generator no one here wrote).
@Suite("KontoClient: second factor", .timeLimit(.minutes(3)))
struct KontoClientFactorTests {
    typealias Harness = GatewayHarness
    static let python = ProcessInfo.processInfo.environment["KONTO_PYOTP_PYTHON"]
    static let onCI = ProcessInfo.processInfo.environment["CI"] != nil

    /// pyotp's codes for the URI at now + each offset (seconds).
    static func pyotp(_ uri: String, offsets: [Int]) async throws -> [String] {
        let python = try #require(python)
        let script = """
            import sys, time, pyotp
            totp = pyotp.parse_uri(sys.argv[1])
            now = int(time.time())
            print(" ".join(totp.at(now + int(offset)) for offset in sys.argv[2:]))
            """
        let run = try await ServiceProcess.run(python, arguments: ["-c", script, uri] + offsets.map(String.init))
        #expect(run.status == 0, "\(run.standardError)")
        return run.standardOutput.split(whereSeparator: \.isWhitespace).map(String.init)
    }

    static func refusal(_ body: () async throws -> Void) async -> KontoClientError? {
        await KontoClientTests.refusal(body)
    }

    @Test(
        "enrol TOTP with pyotp's code; a stolen password alone gets a challenge, no session; the code completes it (aal2); security-related calls need aal2; recovery codes sign in once; removing the last factor is allowed",
        .enabled(if: python != nil || onCI, "KONTO_PYOTP_PYTHON is not set (scripts/test.sh sets it)")
    )
    func journey() async throws {
        guard Self.python != nil else {
            Issue.record("CI is set, but KONTO_PYOTP_PYTHON is not: CI runs the tests through scripts/test.sh, which installs pyotp and sets it")
            return
        }
        try await Harness.withGateway { gateway in
            let owner = KontoClient(gatewayURL: gateway.baseURL)
            try await owner.signUp(userId: "hopper@example.org", password: "nanosecond wire", details: KontoClientTests.named("Grace"))
            #expect(try await owner.factors().isEmpty)
            let enrolment = try await owner.enrollTOTP()
            #expect(enrolment.otpauthURI.hasPrefix("otpauth://totp/"))
            #expect(try await owner.factors().map(\.isPending) == [true])
            let codes = try await Self.pyotp(enrolment.otpauthURI, offsets: [0, 30])
            let wrong = await Self.refusal { try await owner.confirmTOTP(factorId: enrolment.factorId, code: codes[0] == "000000" ? "111111" : "000000") }
            #expect(wrong?.code == "account.wrongSecondFactor")
            let confirmed = try await owner.confirmTOTP(factorId: enrolment.factorId, code: codes[0])
            #expect(!confirmed.isPending && confirmed.type == "totp")

            // The password alone: 202 and a challenge, no session.
            let thief = KontoClient(gatewayURL: gateway.baseURL)
            let challenged = await Self.refusal { try await thief.logIn(userId: "hopper@example.org", password: "nanosecond wire") }
            #expect(challenged?.code == KontoClientError.Code.secondFactorRequired)
            #expect(challenged?.status == 202)
            let challenge = try #require(challenged?.challenge)
            #expect(challenge.factors == ["totp"])
            #expect(try await thief.currentSession() == nil)
            // A replayed code (the confirming one) and a made-up challenge are refused.
            let replayed = await Self.refusal { try await thief.completeLogIn(challenge: challenge, code: codes[0]) }
            #expect(replayed?.code == "account.wrongSecondFactor")
            #expect(replayed?.status == 401)
            var forged = challenge
            forged.token = "bm90LWEtdG9rZW4tbm90LWEtdG9rZW4tbm90LWEtdG9rZW4"
            let invalid = await Self.refusal { try await thief.completeLogIn(challenge: forged, code: codes[1]) }
            #expect(invalid?.code == "account.invalidChallenge")
            #expect(invalid?.status == 401)

            // The owner's second device: the challenge and the next code.
            let device = KontoClient(gatewayURL: gateway.baseURL)
            let second = await Self.refusal { try await device.logIn(userId: "hopper@example.org", password: "nanosecond wire") }
            try await device.completeLogIn(challenge: try #require(second?.challenge), code: codes[1])
            #expect(try await device.account()[\.userId] == "hopper@example.org")
            // The first session is aal1: the password is not enough for a security-related call.
            let weak = await Self.refusal { try await owner.changePassword(to: "a longer nanosecond wire", currentPassword: "nanosecond wire") }
            #expect(weak?.code == "account.secondFactorRequired")
            #expect(weak?.status == 403)
            // The second-factor session is aal2 and privileged: recovery codes.
            let recovery = try await device.regenerateRecoveryCodes()
            #expect(recovery.count == 10 && Set(recovery).count == 10)
            let factors = try await device.factors()
            #expect(factors.map(\.type) == ["totp", "recoveryCodes"])
            #expect(factors.last?.remaining == 10)

            // A recovery code completes a login once.
            let third = KontoClient(gatewayURL: gateway.baseURL)
            let thirdChallenge = try #require(await Self.refusal { try await third.logIn(userId: "hopper@example.org", password: "nanosecond wire") }?.challenge)
            #expect(thirdChallenge.factors == ["totp", "recoveryCode"])
            try await third.completeLogIn(challenge: thirdChallenge, recoveryCode: recovery[0])
            let fourth = KontoClient(gatewayURL: gateway.baseURL)
            let fourthChallenge = try #require(await Self.refusal { try await fourth.logIn(userId: "hopper@example.org", password: "nanosecond wire") }?.challenge)
            let reused = await Self.refusal { try await fourth.completeLogIn(challenge: fourthChallenge, recoveryCode: recovery[0]) }
            #expect(reused?.code == "account.wrongSecondFactor")

            // Reauthenticating the owner's aal1 session with a recovery code opens an aal2 window: the factor goes.
            try await owner.reauthenticate(recoveryCode: recovery[1])
            #expect(try await owner.removeFactor(id: enrolment.factorId) == 0)
            let gone = await Self.refusal { try await owner.removeFactor(id: enrolment.factorId) }
            #expect(gone?.code == "account.factorNotFound")
            #expect(gone?.status == 404)
            // With no factor left, the password alone signs in again.
            try await KontoClient(gatewayURL: gateway.baseURL).logIn(userId: "hopper@example.org", password: "nanosecond wire")
        }
    }

    @Test("guessing codes is throttled per account: after five wrong codes even a right one waits, with Retry-After (429)")
    func throttled() async throws {
        try await Harness.withGateway { gateway in
            let owner = KontoClient(gatewayURL: gateway.baseURL)
            try await owner.signUp(userId: "lovelace@example.org", password: "poetical science", details: KontoClientTests.named("Ada"))
            let enrolment = try await owner.enrollTOTP()
            // "abcdef" is never a code: five refusals, counted against the account in the shared storage.
            for _ in 0..<5 {
                let wrong = await Self.refusal { try await owner.confirmTOTP(factorId: enrolment.factorId, code: "abcdef") }
                #expect(wrong?.code == "account.wrongSecondFactor" && wrong?.status == 401)
            }
            let held = await Self.refusal { try await owner.confirmTOTP(factorId: enrolment.factorId, code: "123456") }
            #expect(held?.code == "account.throttled")
            #expect(held?.status == 429)
            #expect((held?.retryAfter ?? 0) >= 1)
        }
    }
}
