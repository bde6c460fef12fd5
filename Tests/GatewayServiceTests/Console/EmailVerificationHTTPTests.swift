import Foundation
import GatewayService
import KontoContracts
import KontoModel
import KontoWire
import NIOHTTP1
import Testing

/// Email verification through a running gateway and the real services: the API's two routes and the console's page
/// that a verification mail links to.
@Suite("Email verification over HTTP")
struct EmailVerificationHTTPTests {
    /// The token of the verification link Identity asked the courier to send to `accountId` (read from Notifications'
    /// feed, opened with the deployment's secret as the courier would).
    static func verificationToken(_ gateway: GatewayHarness.Running, accountId: String, number: Int = 1) async throws -> String {
        try await gateway.withService(port: gateway.notificationsPort, server: NotificationsContract.serviceName) { notifications in
            let feed = try await notifications.subscribe(NotificationsContract.feed, NotificationsFeedRequest(accountId: accountId), credit: 8)
            defer { feed.cancel() }
            var seen = 0
            for try await delivery in feed {
                feed.acknowledge(delivery)
                if case let .mailRequested(request) = delivery.event.kind, request.message == .verifyEmail, let sealed = request.sealedToken {
                    seen += 1
                    if seen == number { return try ResetTokenSeal(secret: WireSecret(GatewayHarness.secret)).open(sealed, accountId: accountId) }
                }
            }
            throw GatewayHarness.HarnessError("the feed ended without a verification mail")
        }
    }

    @Test("the mailed link's page confirms the address with a button (not on opening), keeping the browser's session and password, ending the account's other sessions; the token then works no more; a new link needs a session")
    func verification() async throws {
        try await GatewayHarness.withGateway { gateway in
            let (session, accountId) = try await gateway.signUp("vera@example.org")
            let token = try await Self.verificationToken(gateway, accountId: accountId)
            // Not verified yet, and no one sets it by writing details: the answer always says what Identity holds.
            let before = try await gateway.request(.GET, "/v1/account", token: session)
            #expect((before.object["details"] as? [String: Any])?["emailVerified"] as? Bool == false)
            let forged = try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"emailVerified":true}}"#, token: session)
            #expect((forged.object["details"] as? [String: Any])?["emailVerified"] as? Bool != true, "\(forged.text)")
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                // The owner, signed in in this browser, opens the link there: that session is theirs and stays.
                _ = try await browser.get("/account/")
                _ = try await browser.post("/account/login", [("userId", "vera@example.org"), ("password", "correct horse battery")])
                let page = try await browser.get("/account/verify?token=\(token)")
                #expect(page.status == 200 && page.html.contains(#"<main id="verify">"#) && page.html.contains(#"value="\#(token)""#))
                // Opening the page used nothing: the API still takes the token... after the button, which confirms.
                let confirmed = try await browser.post("/account/verify", [("token", token)])
                #expect(confirmed.status == 200 && confirmed.html.contains(#"<main id="verified">"#), "\(confirmed.html)")
                let again = try await browser.post("/account/verify", [("token", token)])
                #expect(again.status == 403 && again.html.contains("The verification link is invalid, used or expired."))
                let bare = try await browser.get("/account/verify")
                #expect(bare.html.contains("This page needs the link from your message."))
                let overview = try await browser.get("/account/")
                #expect(overview.html.contains(#"<main id="overview">"#) || overview.html.contains("vera@example.org"), "the browser's session stays: \(overview.html)")
            }
            // The account's first proof ended its other sessions (the sign-up's); the password it was confirmed with stays.
            #expect(try await gateway.request(.GET, "/v1/account", token: session).status == 401)
            let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"vera@example.org","password":"correct horse battery"}"#)
            let current = try #require((login.object["session"] as? [String: Any])?["token"] as? String, "\(login.text)")
            let after = try await gateway.request(.GET, "/v1/account", token: current)
            #expect((after.object["details"] as? [String: Any])?["emailVerified"] as? Bool == true, "\(after.text)")
            let reused = try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(token)"}"#)
            #expect(reused.status == 403 && reused.code == "account.invalidVerificationToken")
            // An empty token is refused like any token that is not one.
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":""}"#).code == "account.invalidVerificationToken")
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{}"#).status == 400)
            // Verified: a new link is accepted and sends nothing; without a session, refused.
            #expect(try await gateway.request(.POST, "/v1/account/email-verification", token: current).status == 202)
            #expect(try await gateway.request(.POST, "/v1/account/email-verification").status == 401)
        }
    }

    @Test("the API confirms a fresh account's token once; a request for a new link is limited per hour")
    func api() async throws {
        try await GatewayHarness.withGateway { gateway in
            let (session, accountId) = try await gateway.signUp("ivo@example.org")
            let token = try await Self.verificationToken(gateway, accountId: accountId)
            // Three new links an hour; the fourth request is throttled with when to retry.
            for _ in 0..<3 {
                #expect(try await gateway.request(.POST, "/v1/account/email-verification", token: session).status == 202)
            }
            let throttled = try await gateway.request(.POST, "/v1/account/email-verification", token: session)
            #expect(throttled.status == 429 && throttled.code == "account.throttled" && throttled.headers.first(name: "Retry-After") != nil)
            // The console's overview offers a new link while the address waits (here past the allowance: a page says so).
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/")
                _ = try await browser.post("/account/login", [("userId", "ivo@example.org"), ("password", "correct horse battery")])
                let overview = try await browser.get("/account/")
                #expect(overview.html.contains(#"id="verification-notice""#), "\(overview.html)")
                let asked = try await browser.post("/account/verify/request", [])
                #expect(asked.status == 429 && asked.html.contains("Too many"), "\(asked.status) \(asked.html)")
                // Any link sent so far still works (the newest as well as the first); then the notice is gone. Confirmed
                // with the API's session, the first proof keeps that one and the password, and ends the browser's.
                #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(token)"}"#, token: session).status == 204)
                #expect(try await gateway.request(.GET, "/v1/account", token: session).status == 200)
                let signedOut = try await browser.get("/account/")
                #expect(!signedOut.html.contains(#"id="verification-notice""#))
                _ = try await browser.post("/account/login", [("userId", "ivo@example.org"), ("password", "correct horse battery")])
                let verified = try await browser.get("/account/")
                #expect(verified.html.contains("ivo@example.org") && !verified.html.contains(#"id="verification-notice""#), "\(verified.html)")
            }
        }
    }

    @Test("where verified addresses are required, an unverified account reads, verifies and deletes but writes no details and adds no factor; once verified it does")
    func required() async throws {
        try await GatewayHarness.withGateway(configure: { $0.requireVerifiedEmail = true }) { gateway in
            let (session, accountId) = try await gateway.signUp("una@example.org")
            let refused = try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"email":"una@work.example"}}"#, token: session)
            #expect(refused.status == 403 && refused.code == "account.emailNotVerified", "\(refused.text)")
            let factor = try await gateway.request(.POST, "/v1/account/factors/totp", json: "{}", token: session)
            #expect(factor.status == 403 && factor.code == "account.emailNotVerified", "\(factor.text)")
            // Every way to add a way in: confirming an authenticator app, registering a passkey, linking a provider.
            let attempts: [(String, String)] = [
                ("/v1/account/factors/totp/any-factor/confirm", #"{"code":"123456"}"#),
                ("/v1/account/factors/passkeys/options", "{}"),
                ("/v1/account/recovery-codes", "{}"),
                ("/v1/account/identities", #"{"provider":"test","idToken":"x","nonce":"y"}"#),
            ]
            for (path, json) in attempts {
                let refusedWay = try await gateway.request(.POST, path, json: json, token: session)
                #expect(refusedWay.status == 403 && refusedWay.code == "account.emailNotVerified", "\(path): \(refusedWay.status) \(refusedWay.text)")
            }
            #expect(try await gateway.request(.GET, "/v1/account", token: session).status == 200)
            #expect(try await gateway.request(.POST, "/v1/account/email-verification", token: session).status == 202)
            let token = try await Self.verificationToken(gateway, accountId: accountId)
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(token)"}"#, token: session).status == 204)
            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"email":"una@work.example"}}"#, token: session).status == 200)
        }
        // The overview's "Send a new link" asks for one and says so.
        try await GatewayHarness.withGateway { gateway in
            _ = try await gateway.signUp("pia@example.org")
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/")
                _ = try await browser.post("/account/login", [("userId", "pia@example.org"), ("password", "correct horse battery")])
                _ = try await browser.get("/account/")
                let asked = try await browser.post("/account/verify/request", [])
                #expect(asked.status == 303 && asked.headers.first(name: "Location")?.hasSuffix("/account/?done=verificationSent") == true, "\(asked.status)")
                #expect(try await browser.get("/account/?done=verificationSent").html.contains("A new link is on its way"))
            }
        }
        // Off (the default), nothing is held back.
        try await GatewayHarness.withGateway { gateway in
            let (session, _) = try await gateway.signUp("otto@example.org")
            #expect(try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"email":"otto@work.example"}}"#, token: session).status == 200)
        }
    }

    @Test("where userIds are usernames the email detail is verified: sign-up's link confirms it; a PATCH to a new address makes it unverified and sends that address a link, which confirms it")
    func contactAddress() async throws {
        let accounts = try AccountConfiguration(userIdType: .username, keys: [.requires(\.userId), .requires(\.password), .requires(\.name), .collects(\.email)])
        try await GatewayHarness.withGateway(accounts: accounts) { gateway in
            let (session, accountId) = try await gateway.signUp("vera", details: #"{"name":{"givenName":"Vera"},"email":"vera@example.org"}"#)
            func verified() async throws -> Bool? {
                let account = try await gateway.request(.GET, "/v1/account", token: session)
                return (account.object["details"] as? [String: Any])?["emailVerified"] as? Bool
            }
            #expect(try await verified() == false)
            let token = try await Self.verificationToken(gateway, accountId: accountId)
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(token)"}"#).status == 204)
            #expect(try await verified() == true)
            let changed = try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"email":"vera@elsewhere.org"}}"#, token: session)
            #expect(changed.status == 200 && (changed.object["details"] as? [String: Any])?["emailVerified"] as? Bool == false, "\(changed.text)")
            let newToken = try await Self.verificationToken(gateway, accountId: accountId, number: 2)
            #expect(newToken != token)
            #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(newToken)"}"#).status == 204)
            #expect(try await verified() == true)
        }
    }
}
