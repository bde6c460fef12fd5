import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import NIOHTTP1
import Testing

/// The second factor's hard stop and what the owner is told (issue 44, items 4, 6 and 8) on the four executables and
/// PostgreSQL: wrong codes lock the authenticator app and mail the owner, a reset through the mail opens it, a
/// sign-in from a new client is told of, and userId changes mail no more chosen addresses than the allowance.
@Suite("The owner is told, over the real services", .serialized, .timeLimit(.minutes(5)))
struct OwnerToldTests {
    /// A client address the gateway takes from a trusted proxy (the test's own loopback), so each step can come from
    /// a client of its choosing.
    static let environment = [
        "KONTO_GATEWAY_CLIENT_ADDRESS_HEADER": "X-Forwarded-For",
        "KONTO_GATEWAY_TRUSTED_PROXIES": "127.0.0.1, ::1",
        "KONTO_IDENTITY_SECOND_FACTOR_LOCK_AFTER": "3",
    ]

    static func from(_ address: String) -> [(String, String)] { [("X-Forwarded-For", address)] }

    @Test("three wrong codes lock the app (the lowest setting, below the hourly throttle): the right code is refused with 403 account.factorLocked and the owner is mailed; a reset through the mail opens it")
    func lock() async throws {
        try await GatewayHarness.withProcesses(environment: Self.environment) { gateway, stack in
            let userId = "locked-owner@example.org"
            let (token, accountId) = try await gateway.signUp(userId)
            // The owner's address proven first (a factor added before the first proof would end with it).
            let link = try #require(try await stack.mail(accountId: accountId, .verifyEmail, logger: GatewayHarness.logger).secret)
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(link)"}"#, token: token).status == 204)
            let answer = try await gateway.request(.POST, "/v1/account/factors/totp", token: token)
            // JSON as people read it: the URI's slashes are not escaped.
            #expect(answer.text.contains(#""otpauthUri":"otpauth://totp/"#), "\(answer.text)")
            let enrolment = answer.object
            let secret = try #require(enrolment["secret"] as? String, "\(enrolment)")
            let factorId = try #require(enrolment["factorId"] as? String)
            let first = try #require(TOTPTestCode.code(base32Secret: secret))
            #expect(try await gateway.request(.POST, "/v1/account/factors/totp/\(factorId)/confirm", json: #"{"code":"\#(first)"}"#, token: token).status == 200)

            func challenge() async throws -> String {
                let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"\#(userId)","password":"correct horse battery"}"#)
                #expect(login.status == 202, "\(login.text)")
                return try #require((login.object["challenge"] as? [String: Any])?["token"] as? String, "\(login.text)")
            }
            let right = try #require(TOTPTestCode.code(base32Secret: secret, offset: 1))
            let wrong = right == "123456" ? "654321" : "123456"
            let answering = try await challenge()
            for _ in 1...3 {
                let answer = try await gateway.request(.POST, "/v1/sessions/mfa", json: #"{"challenge":"\#(answering)","code":"\#(wrong)"}"#)
                #expect(answer.status == 401 && answer.code == "account.wrongSecondFactor", "\(answer.status) \(answer.text)")
            }
            let locked = try await gateway.request(.POST, "/v1/sessions/mfa", json: #"{"challenge":"\#(answering)","code":"\#(right)"}"#)
            #expect(locked.status == 403 && locked.code == "account.factorLocked", "\(locked.status) \(locked.text)")
            let mail = try await stack.mail(accountId: accountId, .secondFactorLocked, logger: GatewayHarness.logger)
            #expect(mail.request.to == userId && mail.request.values["failures"] == "3")

            // A reset through the mail: the factor is still asked for, and its code works again.
            #expect(try await gateway.request(.POST, "/v1/password-resets", json: #"{"userId":"\#(userId)"}"#).status == 202)
            let reset = try #require(try await stack.mail(accountId: accountId, .passwordReset, logger: GatewayHarness.logger).secret)
            #expect(try await gateway.request(.POST, "/v1/password-resets/confirm", json: #"{"token":"\#(reset)","newPassword":"a new password of the owner"}"#).status == 204)
            let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"\#(userId)","password":"a new password of the owner"}"#)
            let again = try #require((login.object["challenge"] as? [String: Any])?["token"] as? String, "\(login.status) \(login.text)")
            let signedIn = try await gateway.request(.POST, "/v1/sessions/mfa", json: #"{"challenge":"\#(again)","code":"\#(right)"}"#)
            #expect(signedIn.status == 200, "\(signedIn.status) \(signedIn.text)")
        }
    }

    @Test("a sign-in from a client the account never saw mails the owner (newSignIn); six userId changes an hour, then 429 and nothing changes")
    func newClientAndChosenAddresses() async throws {
        try await GatewayHarness.withProcesses(environment: Self.environment) { gateway, stack in
            let answer = try await gateway.request(
                .POST, "/v1/accounts", json: #"{"userId":"told@example.org","password":"correct horse battery","details":{"name":{"givenName":"Ada"}}}"#,
                headers: Self.from("198.51.100.10")
            )
            let accountId = try #require(answer.object["accountId"] as? String, "\(answer.text)")
            let token = try #require((answer.object["session"] as? [String: Any])?["token"] as? String)
            let login = { (address: String) in
                try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"told@example.org","password":"correct horse battery"}"#, headers: Self.from(address))
            }
            #expect(try await login("198.51.100.10").status == 200)
            #expect(try await login("203.0.113.77").status == 200)
            #expect(try await login("203.0.113.77").status == 200)
            let told = try await stack.mail(accountId: accountId, .newSignIn, logger: GatewayHarness.logger)
            #expect(told.request.to == "told@example.org" && told.request.values["method"] == "a password")

            // userId changes mail a chosen address each: six an hour.
            var current = "told@example.org"
            for number in 1...6 {
                let next = "told\(number)@example.org"
                let change = try await gateway.request(.PUT, "/v1/account/user-id", json: #"{"userId":"\#(next)","currentPassword":"correct horse battery"}"#, token: token)
                #expect(change.status == 204, "\(number): \(change.status) \(change.text)")
                current = next
            }
            let refused = try await gateway.request(.PUT, "/v1/account/user-id", json: #"{"userId":"victim@example.org","currentPassword":"correct horse battery"}"#, token: token)
            #expect(refused.status == 429 && refused.code == "account.throttled", "\(refused.status) \(refused.text)")
            let account = try await gateway.request(.GET, "/v1/account", token: token)
            #expect((account.object["details"] as? [String: Any])?["userId"] as? String == current, "\(account.text)")
        }
    }
}
