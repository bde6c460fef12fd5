import Foundation
import KontoClient
import KontoContracts
import KontoModel
import KontoTestSupport
import NIOHTTP1
import Testing

/// Verification by code over the real services (issue 70, 1): an app signs up through the API, the owner types the
/// mailed code into it, and keeps the password and the app's session; a squatter holding only a session gets nowhere.
@Suite("Verification by code over the real services", .serialized, .timeLimit(.minutes(5)))
struct VerificationCodeHTTPTests {
    static let password = "correct horse battery"

    @Test("the mobile journey: API sign-up, the mail's code confirmed with the app's session (204): verified at once, nothing ended (the app's and another device's sessions, the password); refusals named; KontoClient and the CLI's call do the same")
    func mobileJourney() async throws {
        try await GatewayHarness.withProcesses { gateway, stack in
            let (app, accountId) = try await gateway.signUp("phone-owner@example.org", password: Self.password)
            // Another device signed in before the proof with the password: the owner's proof ends nothing, so it stays.
            let laptop = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"phone-owner@example.org","password":"\#(Self.password)"}"#)
            let laptopToken = try #require((laptop.object["session"] as? [String: Any])?["token"] as? String)
            let code = try await stack.verificationCode(accountId: accountId, logger: GatewayHarness.logger)
            let path = "/v1/account/email-verification/confirm"

            // Refusals first: no session, a malformed code, a wrong code, an unknown field.
            let anonymous = try await gateway.request(.POST, path, json: #"{"code":"\#(code)"}"#)
            #expect(anonymous.status == 401 && anonymous.headers.first(name: "WWW-Authenticate")?.hasPrefix("Bearer") == true, "\(anonymous.status) \(anonymous.text)")
            let malformed = try await gateway.request(.POST, path, json: #"{"code":"12ab"}"#, token: app)
            #expect(malformed.status == 422 && malformed.code == "account.validationFailed", "\(malformed.status) \(malformed.text)")
            let wrong = try await gateway.request(.POST, path, json: #"{"code":"\#(code == "00000000" ? "00000001" : "00000000")"}"#, token: app)
            #expect(wrong.status == 403 && wrong.code == "account.invalidVerificationToken", "\(wrong.status) \(wrong.text)")
            let extra = try await gateway.request(.POST, path, json: #"{"code":"\#(code)","token":"x"}"#, token: app)
            #expect(extra.status == 400 && extra.text.contains("token"), "the unknown field is named: \(extra.status) \(extra.text)")
            #expect(try await gateway.request(.GET, "/v1/account", token: app).object["details"].flatMap { ($0 as? [String: Any])?["emailVerified"] as? Bool } == false)

            let confirmed = try await gateway.request(.POST, path, json: #"{"code":"\#(code)"}"#, token: app)
            #expect(confirmed.status == 204, "\(confirmed.status) \(confirmed.text)")
            let account = try await gateway.request(.GET, "/v1/account", token: app)
            #expect(account.status == 200 && (account.object["details"] as? [String: Any])?["emailVerified"] as? Bool == true, "the app's session stays, verified at once: \(account.text)")
            #expect(try await gateway.request(.GET, "/v1/account", token: laptopToken).status == 200, "the other device's session stays: the owner's proof ends nothing")
            let again = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"phone-owner@example.org","password":"\#(Self.password)"}"#)
            #expect(again.status == 200, "the password stays: \(again.status) \(again.text)")
            let used = try await gateway.request(.POST, path, json: #"{"code":"\#(code)"}"#, token: app)
            #expect(used.status == 403 && used.code == "account.invalidVerificationToken")
            // The link of the same mail went with the code.
            let link = try #require(try await stack.mail(accountId: accountId, .verifyEmail, logger: GatewayHarness.logger).secret)
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(link)"}"#).code == "account.invalidVerificationToken")

            // KontoClient, as an app calls it.
            let client = KontoClient(gatewayURL: gateway.baseURL)
            let signedUp = try await client.signUp(userId: "client-owner@example.org", password: Self.password, details: AccountDetails(values: [
                "name": .object(["givenName": .string("Grace"), "familyName": .string("Hopper")]),
            ]))
            let clientCode = try await stack.verificationCode(accountId: signedUp.session.accountId, logger: GatewayHarness.logger)
            do {
                try await client.confirmEmailVerification(code: "00000000" == clientCode ? "00000001" : "00000000")
                Issue.record("a wrong code was accepted")
            } catch let error as KontoClientError {
                #expect(error.code == "account.invalidVerificationToken" && error.status == 403)
            }
            try await client.confirmEmailVerification(code: clientCode)
            #expect(try await client.account().details.storedValues["emailVerified"] == .bool(true))
        }
    }

    @Test("the squatter's journey stays closed: a session without the mailbox has no code, ten guesses an hour, then 429; the owner's link still ends the squatter")
    func squatter() async throws {
        try await GatewayHarness.withProcesses { gateway, stack in
            let (squatter, accountId) = try await gateway.signUp("victim@example.org", password: "the squatter's password 1")
            let path = "/v1/account/email-verification/confirm"
            var statuses: [Int] = []
            for guess in 0..<12 {
                statuses.append(try await gateway.request(.POST, path, json: #"{"code":"\#(String(format: "%08d", 10_000_000 + guess))"}"#, token: squatter).status)
            }
            #expect(statuses.prefix(10).allSatisfy { $0 == 403 } && statuses.suffix(2).allSatisfy { $0 == 429 }, "\(statuses)")
            #expect(try await gateway.request(.GET, "/v1/account", token: squatter).object["details"].flatMap { ($0 as? [String: Any])?["emailVerified"] as? Bool } == false)
            // The owner opens the link of the mail the squatter caused, on another device: the squatter is out.
            let link = try #require(try await stack.mail(accountId: accountId, .verifyEmail, logger: GatewayHarness.logger).secret)
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(link)"}"#).status == 204)
            #expect(try await gateway.request(.GET, "/v1/account", token: squatter).status == 401)
        }
    }
}
