import Foundation
import KontoTestSupport
import NIOHTTP1
import Testing

/// The console's login of an account with a second factor, over HTTP: the password gives no session but a page
/// asking for a code, the challenge in a cookie of its own; the code (the test plays the authenticator app) gives
/// the session.
@Suite("Web console: second factor")
struct ConsoleSecondFactorTests {
    static let password = "correct horse battery"

    @Test("a correct password leads to the code page, not a session; a wrong code is refused there; the app's code or a recovery code signs in")
    func secondStep() async throws {
        try await GatewayHarness.withGateway { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/signup")
                let signedUp = try await browser.post("/account/signup", [
                    ("userId", "ada@example.org"), ("password", Self.password), ("name[givenName]", "Ada"), ("name[familyName]", "Lovelace"),
                ])
                #expect(signedUp.status == 303)
                // The authenticator app, enrolled through the API with the console's session (within its window).
                let token = try #require(browser.cookies["konto_session"])
                let enrolment = try await gateway.request(.POST, "/v1/account/factors/totp", token: token).object
                let secret = try #require(enrolment["secret"] as? String)
                let factorId = try #require(enrolment["factorId"] as? String)
                let code = try #require(TOTPTestCode.code(base32Secret: secret))
                let confirmed = try await gateway.request(.POST, "/v1/account/factors/totp/\(factorId)/confirm", json: #"{"code":"\#(code)"}"#, token: token)
                #expect(confirmed.status == 200)
                let logOut = try await browser.post("/account/logout", [])
                #expect(logOut.status == 303)

                let password = try await browser.post("/account/login", [("userId", "ada@example.org"), ("password", Self.password)])
                #expect(password.status == 303)
                #expect(password.location == "/account/second-factor")
                #expect(password.setCookie("konto_session") == nil, "no session from the password alone")
                let challengeCookie = try #require(password.setCookie("konto_challenge"))
                #expect(challengeCookie.contains("HttpOnly") && challengeCookie.contains("SameSite=Strict") && challengeCookie.contains("Path=/account"))
                let page = try await browser.get("/account/second-factor")
                #expect(page.status == 200)
                #expect(page.html.contains(#"<form id="second-factor-form""#) && page.html.contains(#"id="field-code""#))
                #expect(page.html.contains(#"autocomplete="one-time-code""#))

                let wrong = try await browser.post("/account/second-factor", [("code", "abcdef")])
                #expect(wrong.status == 401)
                #expect(wrong.html.contains("The code is wrong"))
                #expect(wrong.setCookie("konto_session") == nil)
                let next = try #require(TOTPTestCode.code(base32Secret: secret, offset: 1))
                let signedIn = try await browser.post("/account/second-factor", [("code", next)])
                #expect(signedIn.status == 303)
                #expect(signedIn.location == "/account/")
                #expect(signedIn.setCookie("konto_session") != nil)
                #expect(signedIn.setCookie("konto_challenge")?.contains("Max-Age=0") == true)
                let overview = try await browser.get("/account/")
                #expect(overview.html.contains(#"<main id="overview">"#))

                // Without a challenge the page sends the browser back to the login.
                _ = try await browser.post("/account/logout", [])
                let noChallenge = try await browser.get("/account/second-factor")
                #expect(noChallenge.status == 303)
            }
        }
    }

    @Test("the factors page: enrol an app from its QR code, confirm it, reauthenticate with a code for recovery codes, remove it")
    func management() async throws {
        try await GatewayHarness.withGateway { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/signup")
                _ = try await browser.post("/account/signup", [
                    ("userId", "ada@example.org"), ("password", Self.password), ("name[givenName]", "Ada"), ("name[familyName]", "Lovelace"),
                ])
                let overview = try await browser.get("/account/")
                #expect(overview.html.contains(#"id="factors-link""#))
                let empty = try await browser.get("/account/factors")
                #expect(empty.html.contains(#"<p id="no-factors">"#))

                let enrol = try await browser.post("/account/factors/totp", [])
                #expect(enrol.status == 200)
                #expect(enrol.html.contains(#"<figure id="totp-qr"><svg xmlns="http://www.w3.org/2000/svg""#))
                let secret = try #require(enrol.html.firstMatch(of: /<code id="totp-secret">([A-Z2-7]+)<\/code>/).map { String($0.1) })
                let factorId = try #require(enrol.html.firstMatch(of: /name="factorId" value="([^"]+)"/).map { String($0.1) })
                let wrong = try await browser.post("/account/factors/totp/confirm", [("factorId", factorId), ("code", "abcdef")])
                #expect(wrong.status == 401)
                #expect(wrong.html.contains(#"id="error-code""#) && !wrong.html.contains("totp-qr"))
                let confirmed = try await browser.post("/account/factors/totp/confirm", [("factorId", factorId), ("code", try #require(TOTPTestCode.code(base32Secret: secret)))])
                #expect(confirmed.status == 303)
                #expect(confirmed.location == "/account/factors?done=totp")
                let listed = try await browser.get("/account/factors?done=totp")
                #expect(listed.html.contains(#"id="factor-\#(factorId)""#))

                // The sign-up's session is aal1: new recovery codes need the code first.
                let refused = try await browser.post("/account/recovery-codes", [])
                #expect(refused.status == 303)
                #expect(refused.location == "/account/reauthenticate")
                let reauthenticated = try await browser.post("/account/reauthenticate", [("code", try #require(TOTPTestCode.code(base32Secret: secret, offset: 1)))])
                #expect(reauthenticated.status == 303, "\(reauthenticated.html)")
                #expect(reauthenticated.setCookie("konto_session") != nil, "a fresh session replaces the one presented")
                let codes = try await browser.post("/account/recovery-codes", [])
                #expect(codes.status == 200)
                #expect(codes.html.matches(of: /<li><code>[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}<\/code><\/li>/).count == 10)

                let removed = try await browser.post("/account/factors/remove", [("factorId", factorId)])
                #expect(removed.status == 303)
                // Recovery codes alone are no second factor: none is left.
                #expect(removed.location == "/account/factors?done=removedLast")
            }
        }
    }
}
