import Foundation
import GatewayService
import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import NIOHTTP1
import Testing

/// Sign-in by emailed code through a running gateway and the real services: the API's two routes and the console's
/// pages, where the deployment offers it, and nothing where it does not.
@Suite("Sign-in by emailed code over HTTP")
struct EmailCodeHTTPTests {
    static let on: IdentityOptions = {
        var options = IdentityOptions()
        options.emailCodeLogin = true
        return options
    }()

    /// The `count`-th sign-in code mailed to `accountId` (read from Notifications' feed, opened with the deployment's
    /// secret as the courier would).
    static func mailedCode(_ gateway: GatewayHarness.Running, accountId: String, number: Int = 1) async throws -> String {
        try await gateway.withService(port: gateway.notificationsPort, server: NotificationsContract.serviceName) { notifications in
            let feed = try await notifications.subscribe(NotificationsContract.feed, NotificationsFeedRequest(accountId: accountId), credit: 16)
            defer { feed.cancel() }
            var seen = 0
            for try await delivery in feed {
                feed.acknowledge(delivery)
                if case let .mailRequested(request) = delivery.event.kind, request.message == .signInCode, let sealed = request.sealedToken {
                    seen += 1
                    if seen == number { return try ResetTokenSeal(secret: WireSecret(GatewayHarness.secret)).open(sealed, accountId: accountId) }
                }
            }
            throw GatewayHarness.HarnessError("the feed ended without a sign-in code")
        }
    }

    @Test("the API: 202 alike for an account and for none; the mailed code signs in once (401 alike for a wrong one or none), 400 for a code that is not 8 digits")
    func api() async throws {
        try await GatewayHarness.withGateway(configure: { $0.emailCodeLogin = true }, identityOptions: Self.on) { gateway in
            let (_, accountId) = try await gateway.signUp("cora@example.org")
            let known = try await gateway.request(.POST, "/v1/sessions/email-code", json: #"{"userId":"cora@example.org"}"#)
            let unknown = try await gateway.request(.POST, "/v1/sessions/email-code", json: #"{"userId":"nobody@example.org"}"#)
            #expect(known.status == 202 && unknown.status == 202 && known.text == unknown.text)
            #expect(try await gateway.request(.POST, "/v1/sessions/email-code", json: #"{"userId":"not an address"}"#).code == "account.validationFailed")
            let code = try await Self.mailedCode(gateway, accountId: accountId)
            let wrong = code == "00000000" ? "00000001" : "00000000"
            let mistyped = try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"cora@example.org","code":"\#(wrong)"}"#)
            let nobody = try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"nobody@example.org","code":"\#(code)"}"#)
            #expect(mistyped.status == 401 && mistyped.code == "account.wrongCredentials" && nobody.status == 401 && nobody.code == mistyped.code)
            let malformed = try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"cora@example.org","code":"12"}"#)
            #expect(malformed.code == "account.validationFailed", "\(malformed.text)")
            #expect(try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"cora@example.org"}"#).status == 400)

            let signedIn = try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"cora@example.org","code":"\#(code)"}"#)
            #expect(signedIn.status == 200, "\(signedIn.text)")
            let token = try #require((signedIn.object["session"] as? [String: Any])?["token"] as? String)
            let account = try await gateway.request(.GET, "/v1/account", token: token)
            #expect((account.object["details"] as? [String: Any])?["emailVerified"] as? Bool == true, "\(account.text)")
            // Not privileged: a security-related step asks for the password.
            let change = try await gateway.request(.PUT, "/v1/account/password", json: #"{"newPassword":"another horse battery"}"#, token: token)
            #expect(change.code == "account.reauthenticationRequired", "\(change.text)")
            let reused = try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"cora@example.org","code":"\#(code)"}"#)
            #expect(reused.status == 401)
        }
    }

    @Test("an attacker without a session: asking again and again is held (429), and so is guessing codes, the mailed code then waiting it out too")
    func attacker() async throws {
        try await GatewayHarness.withGateway(configure: { $0.emailCodeLogin = true }, identityOptions: Self.on) { gateway in
            let (_, accountId) = try await gateway.signUp("gus@example.org")
            var requests: [Int] = []
            for _ in 0..<7 {
                requests.append(try await gateway.request(.POST, "/v1/sessions/email-code", json: #"{"userId":"gus@example.org"}"#).status)
            }
            // One address asking: five, then held (docs/IDENTITY.md: counted like failed logins).
            #expect(requests == [202, 202, 202, 202, 202, 429, 429], "\(requests)")
            let code = try await Self.mailedCode(gateway, accountId: accountId)
            // Guesses at the account: wrong credentials, then held; even the right code is refused while held.
            var guesses: [Int] = []
            for guess in 0..<6 {
                let wrong = String(format: "%08d", (Int(code)! + 1 + guess) % 100_000_000)
                guesses.append(try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"gus@example.org","code":"\#(wrong)"}"#).status)
            }
            #expect(guesses == [401, 401, 401, 401, 401, 429], "\(guesses)")
            let held = try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"gus@example.org","code":"\#(code)"}"#)
            #expect(held.status == 429 && held.headers.first(name: "Retry-After") != nil && held.code == "account.throttled")
        }
    }

    @Test("off by default: the routes answer 404 and the console neither offers nor serves it")
    func off() async throws {
        try await GatewayHarness.withGateway { gateway in
            _ = try await gateway.signUp("dora@example.org")
            let asked = try await gateway.request(.POST, "/v1/sessions/email-code", json: #"{"userId":"dora@example.org"}"#)
            let used = try await gateway.request(.POST, "/v1/sessions/email-code/confirm", json: #"{"userId":"dora@example.org","code":"12345678"}"#)
            #expect(asked.status == 404 && asked.code == "account.notFound" && used.status == 404)
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                let setup = try await browser.get("/account/")
                #expect(!setup.html.contains(#"id="email-code-link""#))
                #expect(try await browser.get("/account/login/code").status == 303)
            }
        }
    }

    @Test("the console: the sign-in page offers it; an address gets the code page (alike for none); a wrong code says so; the mailed one signs in")
    func console() async throws {
        try await GatewayHarness.withGateway(configure: { $0.emailCodeLogin = true }, identityOptions: Self.on) { gateway in
            let (_, accountId) = try await gateway.signUp("flora@example.org")
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                let setup = try await browser.get("/account/")
                #expect(setup.html.contains(#"id="email-code-link""#))
                let form = try await browser.get("/account/login/code")
                #expect(form.status == 200 && form.html.contains(#"id="email-code-request-form""#))
                let empty = try await browser.post("/account/login/code", [("userId", "")])
                #expect(empty.status == 422)
                let none = try await browser.post("/account/login/code", [("userId", "nobody@example.org")])
                let entry = try await browser.post("/account/login/code", [("userId", "flora@example.org")])
                #expect(entry.status == 200 && entry.html.contains(#"id="email-code-form""#) && entry.html.contains(#"value="flora@example.org""#))
                #expect(none.status == 200 && none.html.contains(#"id="email-code-form""#))
                let code = try await Self.mailedCode(gateway, accountId: accountId)
                let wrong = code == "00000000" ? "00000001" : "00000000"
                let refused = try await browser.post("/account/login/code/confirm", [("userId", "flora@example.org"), ("code", wrong)])
                #expect(refused.status == 401 && refused.html.contains(#"id="email-code-form""#), "\(refused.html)")
                // Spaces a reader puts between the digits are no part of the code.
                let spaced = String(code.prefix(4)) + " " + String(code.suffix(4))
                let signedIn = try await browser.post("/account/login/code/confirm", [("userId", "flora@example.org"), ("code", spaced)])
                #expect(signedIn.status == 303 && signedIn.setCookie("konto_session") != nil, "\(signedIn.status) \(signedIn.html)")
                let overview = try await browser.get("/account/")
                #expect(overview.html.contains(#"<main id="overview">"#) && !overview.html.contains(#"id="verification-notice""#), "\(overview.html)")
            }
        }
    }
}
