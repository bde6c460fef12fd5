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

    @Test("the mailed link's page confirms the address with a button (not on opening); signed in, the owner's proof ends nothing (the sign-up's session stays); the token then works no more; a new link needs a session")
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
                #expect(bare.status == 400 && bare.html.contains("This page needs the link from your message."))
                let overview = try await browser.get("/account/")
                #expect(overview.html.contains(#"<main id="overview">"#) || overview.html.contains("vera@example.org"), "the browser's session stays: \(overview.html)")
            }
            // The owner's proof (the browser's session with the mailbox's link) ended nothing: the sign-up's session stays.
            #expect(try await gateway.request(.GET, "/v1/account", token: session).status == 200)
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

    @Test("the link opened without a session: the page offers to sign in first or to secure the account; a post without that choice confirms nothing; signing in comes back to the page, and confirming then ends nothing (the app's session stays); an ended session or another account's is refused with the token kept; \"I did not create this account\" ends the squatter's password and sessions")
    func signedOut() async throws {
        try await GatewayHarness.withGateway { gateway in
            // The app signed up; the link is opened in a browser that has no session.
            let (app, accountId) = try await gateway.signUp("otto@example.org")
            let token = try await Self.verificationToken(gateway, accountId: accountId)
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                let page = try await browser.get("/account/verify?token=\(token)")
                #expect(page.status == 200 && page.html.contains(#"id="verify-sign-in-form""#) && page.html.contains(#"id="verify-secure-form""#), "\(page.html)")
                #expect(!page.html.contains(#"id="verify-form""#), "signed out, no button confirms outright")
                // A post without "I did not create this account" (an old page's button, a forged form) confirms nothing.
                let bare = try await browser.post("/account/verify", [("token", token)])
                #expect(bare.status == 401 && bare.html.contains("Sign in to confirm your address"), "\(bare.status) \(bare.html)")
                #expect(try await gateway.request(.GET, "/v1/account", token: app).status == 200)
                // "Sign in to confirm": the token waits in a cookie; the setup page says why it asks.
                let start = try await browser.post("/account/verify/sign-in", [("token", token)])
                #expect(start.status == 303 && start.location == "/account/?done=signInToVerify" && start.setCookie("konto_verify") != nil, "\(start.status) \(start.headers)")
                let setup = try await browser.get("/account/?done=signInToVerify")
                #expect(setup.html.contains("Sign in with your password or a passkey to confirm your email address."))
                let login = try await browser.post("/account/login", [("userId", "otto@example.org"), ("password", "correct horse battery")])
                #expect(login.status == 303 && login.location == "/account/verify/resume", "\(login.status) \(login.headers)")
                let resumed = try await browser.get("/account/verify/resume")
                #expect(resumed.status == 200 && resumed.html.contains(#"id="verify-form""#) && resumed.html.contains(#"value="\#(token)""#), "\(resumed.html)")
                #expect(browser.cookies["konto_verify"] == nil, "the waiting token's cookie goes once used")
                let confirmed = try await browser.post("/account/verify", [("token", token)])
                #expect(confirmed.status == 200 && confirmed.html.contains(#"<main id="verified">"#) && confirmed.html.contains("Nothing else on your account changed."), "\(confirmed.html)")
                // Nothing lost: the app's session answers, verified now; the password signs in.
                let account = try await gateway.request(.GET, "/v1/account", token: app)
                #expect(account.status == 200 && (account.object["details"] as? [String: Any])?["emailVerified"] as? Bool == true, "\(account.text)")
                #expect(try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"otto@example.org","password":"correct horse battery"}"#).status == 200)
                // Without the waiting cookie, the resume page sends the browser home.
                #expect(try await browser.get("/account/verify/resume").location == "/account/")

                // A squatter signed up with Nora's address. Signed in here as Otto, her link is not Otto's: refused, kept.
                let (squatter, noraId) = try await gateway.signUp("nora@example.org", password: "the squatter's password")
                let noraToken = try await Self.verificationToken(gateway, accountId: noraId)
                let otherAccount = try await browser.post("/account/verify", [("token", noraToken)])
                #expect(otherAccount.status == 403 && otherAccount.html.contains("log out and sign in to that one"), "\(otherAccount.status) \(otherAccount.html)")
                // A session that has ended is refused too (not taken for none), and its cookie goes.
                browser.cookies["konto_session"] = "bm90LWEtc2Vzc2lvbi1ub3QtYS1zZXNzaW9uLW5vdC1hLXNlc3Npb24"
                let ended = try await browser.post("/account/verify", [("token", noraToken)])
                #expect(ended.status == 401 && ended.html.contains("Your session has ended") && ended.html.contains(#"id="verify-secure-form""#), "\(ended.status) \(ended.html)")
                #expect(browser.cookies["konto_session"] == nil)
                #expect(try await gateway.request(.GET, "/v1/account", token: squatter).status == 200, "nothing was confirmed yet")
                // Nora did not create the account: securing it ends the squatter's session and password.
                let secured = try await browser.post("/account/verify", [("token", noraToken), ("intent", "secure")])
                #expect(secured.status == 200 && secured.html.contains("Account secured") && secured.html.contains(#"href="/account/reset""#), "\(secured.html)")
                #expect(try await gateway.request(.GET, "/v1/account", token: squatter).status == 401)
                let squatterLogin = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"nora@example.org","password":"the squatter's password"}"#)
                #expect(squatterLogin.status == 401 && squatterLogin.code == "account.wrongCredentials")
                // A sign-in start without a token is no flow.
                #expect(try await browser.post("/account/verify/sign-in", [("token", "")]).status == 400)
            }
            // The API: a bearer that is not a valid session is 401 and the token stays (here: already used, but the
            // session is looked at first); without one, the token is refused as used.
            let invalid = try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(token)"}"#, token: "bm90LWEtc2Vzc2lvbi1ub3QtYS1zZXNzaW9uLW5vdC1hLXNlc3Npb24")
            #expect(invalid.status == 401 && invalid.code == "account.unauthenticated", "\(invalid.text)")
            let tooLong = try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(token)"}"#, token: String(repeating: "a", count: 600))
            #expect(tooLong.status == 401, "\(tooLong.text)")
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
                // with the API's session, the owner's proof ends nothing: the browser stays signed in.
                #expect(try await gateway.request(.POST, "/v1/email-verifications/confirm", json: #"{"token":"\#(token)"}"#, token: session).status == 204)
                #expect(try await gateway.request(.GET, "/v1/account", token: session).status == 200)
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
