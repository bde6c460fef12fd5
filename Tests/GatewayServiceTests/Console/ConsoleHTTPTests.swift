import Foundation
import GatewayService
import IdentityService
import KontoTesting
import NIOHTTP1
import Testing

/// The web console through a running gateway and the real services: its cookies, CSRF protection, headers and the
/// answers that must not tell accounts apart. (The whole journey runs in Chromium: ConsoleBrowserTests.)
@Suite("Web console over HTTP")
struct ConsoleHTTPTests {
    static let password = "correct horse battery"

    @Test("pages carry the CSP and no-store; cookies are HttpOnly, the session's SameSite=Lax on the console's path; a script as a name is text")
    func headersAndCookies() async throws {
        try await GatewayHarness.withGateway { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                let setup = try await browser.get("/account/")
                #expect(setup.status == 200)
                #expect(setup.html.contains(#"<main id="account-setup">"#))
                #expect(setup.headers.first(name: "Content-Type") == "text/html; charset=utf-8")
                let policy = try #require(setup.headers.first(name: "Content-Security-Policy"))
                #expect(policy.contains("script-src 'self'") && policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'"))
                #expect(!policy.contains("unsafe-inline"))
                #expect(setup.headers.first(name: "Cache-Control") == "no-store")
                #expect(setup.headers.first(name: "Referrer-Policy") == "no-referrer")
                let csrf = try #require(setup.setCookie("konto_csrf"))
                #expect(csrf.contains("HttpOnly") && csrf.contains("SameSite=Strict") && csrf.contains("Path=/account"))
                // No script of the page is inline.
                #expect(!setup.html.contains("<script>"))

                _ = try await browser.get("/account/signup")
                let signedUp = try await browser.post("/account/signup", [
                    ("userId", "ada@example.org"), ("password", Self.password),
                    ("name[givenName]", "<script>alert(1)</script>"), ("name[familyName]", "Lovelace"),
                ])
                #expect(signedUp.status == 303)
                #expect(signedUp.location == "/account/?done=welcome")
                let session = try #require(signedUp.setCookie("konto_session"))
                #expect(session.contains("HttpOnly") && session.contains("SameSite=Lax") && session.contains("Path=/account"))
                #expect(!session.contains("Secure"))

                let overview = try await browser.get("/account/?done=welcome")
                #expect(overview.html.contains(#"<main id="overview">"#))
                #expect(overview.html.contains(#"<dd id="value-name">&lt;script&gt;alert(1)&lt;/script&gt; Lovelace</dd>"#))
                #expect(overview.html.contains(#"<dd id="value-userId">ada@example.org</dd>"#))
                #expect(overview.html.contains(#"<p role="status" id="notice" class="notice">Welcome! Your account is ready.</p>"#))
                // The same session works with the API: the cookie holds the session's token.
                let token = try #require(browser.cookies["konto_session"])
                #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 200)

                // Within the privileged window after sign-up a password change needs no current password.
                let passwordPage = try await browser.get("/account/password")
                #expect(passwordPage.html.contains(#"<form id="password-form""#) && passwordPage.html.contains(#"id="field-newPassword""#))
                #expect(!passwordPage.html.contains(#"id="field-currentPassword""#))
                let tooShort = try await browser.post("/account/password", [("newPassword", "short")])
                #expect(tooShort.status == 422)
                #expect(tooShort.html.contains(#"<p class="field-error" id="error-newPassword">"#))
                // The refused password is not written back into the page.
                #expect(!tooShort.html.contains(#"value="short""#), "\(tooShort.html)")
                let changed = try await browser.post("/account/password", [("newPassword", "another horse battery")])
                #expect(changed.status == 303 && changed.location == "/account/?done=password")
                // A deletion always asks for the password and a confirmation.
                let deletePage = try await browser.get("/account/delete")
                #expect(deletePage.html.contains(#"id="field-confirm""#) && deletePage.html.contains(#"id="field-currentPassword""#))
                let unconfirmed = try await browser.post("/account/delete", [("currentPassword", "another horse battery")])
                #expect(unconfirmed.status == 422)
                #expect(unconfirmed.html.contains(#"<p class="field-error" id="error-confirm">Confirm that you want to delete your account.</p>"#))
                let wrong = try await browser.post("/account/delete", [("confirm", "true"), ("currentPassword", Self.password)])
                #expect(wrong.html.contains(#"<p class="field-error" id="error-currentPassword">The password is wrong.</p>"#))
                #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 200)

                // Logging out ends the session and drops the cookie.
                let loggedOut = try await browser.post("/account/logout", [])
                #expect(loggedOut.status == 303)
                #expect(loggedOut.setCookie("konto_session")?.contains("Max-Age=0") == true)
                #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 401)
                #expect(try await browser.get("/account/?done=loggedOut").html.contains("You are logged out."))
            }
        }
    }

    @Test("a browser that logged in before keeps its device cookie and is not locked out by a stranger's failures, from any address")
    func deviceCookie() async throws {
        // A hold of 1 s (the default first one) could end while a loaded machine runs the steps after the storm.
        var identity = IdentityOptions()
        identity.throttle.baseDelay = .seconds(300)
        try await GatewayHarness.withGateway(configure: {
            $0.clientAddressHeader = "X-Forwarded-For"
            $0.trustedProxies = GatewayLimitsTests.loopback
        }, identityOptions: identity) { gateway in
            _ = try await gateway.signUp("ada@example.org", password: Self.password)
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                browser.extraHeaders = [("X-Forwarded-For", "198.51.100.10")]
                _ = try await browser.get("/account/")
                let login = [("userId", "ada@example.org"), ("password", Self.password)]
                let first = try await browser.post("/account/login", login)
                #expect(first.status == 303)
                let device = try #require(first.setCookie("konto_device"))
                #expect(device.contains("HttpOnly") && device.contains("Max-Age=7776000") && device.contains("Path=/account"), "\(device)")
                // A stranger's guess-storm on the userId, from elsewhere.
                for attempt in 0..<8 {
                    _ = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"ada@example.org","password":"guess \#(attempt)"}"#, headers: [("X-Forwarded-For", "203.0.113.9")])
                }
                let locked = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"ada@example.org","password":"\#(Self.password)"}"#, headers: [("X-Forwarded-For", "192.0.2.60")])
                #expect(locked.status == 429, "an unknown client waits")
                // The browser, now on another network, signs in: its device cookie is known.
                browser.extraHeaders = [("X-Forwarded-For", "192.0.2.61")]
                _ = try await browser.get("/account/")
                let again = try await browser.post("/account/login", login)
                #expect(again.status == 303, "\(again.status) \(again.html.prefix(300))")
                #expect(again.setCookie("konto_session") != nil)
                #expect(again.setCookie("konto_device") == nil, "the marker is kept, not replaced")
                // A browser without it, on that network, is held like any stranger.
                var other = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                other.extraHeaders = [("X-Forwarded-For", "192.0.2.62")]
                _ = try await other.get("/account/")
                #expect(try await other.post("/account/login", login).status == 429)
            }
        }
    }

    @Test("a form without its CSRF token, with another cookie's, or sent cross-site is refused and changes nothing")
    func csrf() async throws {
        try await GatewayHarness.withGateway { gateway in
            _ = try await gateway.signUp("grace@example.org", password: Self.password)
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/")
                let login = [("userId", "grace@example.org"), ("password", Self.password)]

                let missing = try await browser.post("/account/login", login, csrf: .some(nil))
                #expect(missing.status == 403)
                #expect(missing.html.contains(#"id="form-error""#))
                #expect(missing.setCookie("konto_session") == nil)

                var other = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await other.get("/account/")
                let foreign = try await browser.post("/account/login", login, csrf: .some(other.lastCSRF))
                #expect(foreign.status == 403)

                browser.extraHeaders = [("Sec-Fetch-Site", "cross-site")]
                let crossSite = try await browser.post("/account/login", login)
                #expect(crossSite.status == 403)
                #expect(crossSite.setCookie("konto_session") == nil)

                browser.extraHeaders = [("Sec-Fetch-Site", "same-origin")]
                let accepted = try await browser.post("/account/login", login)
                #expect(accepted.status == 303)
                #expect(accepted.setCookie("konto_session") != nil)
            }
        }
    }

    @Test("a wrong password and an unknown user get the same page; a reset request answers alike for both")
    func noEnumeration() async throws {
        try await GatewayHarness.withGateway { gateway in
            _ = try await gateway.signUp("known@example.org", password: Self.password)
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/")
                let wrong = try await browser.post("/account/login", [("userId", "known@example.org"), ("password", "not the password")])
                let unknown = try await browser.post("/account/login", [("userId", "unknown@example.org"), ("password", "not the password")])
                #expect(wrong.status == 401 && unknown.status == 401)
                for page in [wrong, unknown] {
                    // In the form's own words: its field is the "Email address", not a "user identifier".
                    #expect(page.html.contains(#"<div role="alert" id="form-error" class="form-error">The email address or password is wrong.</div>"#), "\(page.html)")
                    #expect(!page.html.contains("user identifier"))
                }
                // The user id typed is kept; the wrong password is not written back.
                #expect(wrong.html.contains(#"value="known@example.org""#))
                #expect(!wrong.html.contains("not the password"))

                _ = try await browser.get("/account/reset")
                let known = try await browser.post("/account/reset", [("userId", "known@example.org")])
                let nobody = try await browser.post("/account/reset", [("userId", "nobody@example.org")])
                #expect(known.status == 200 && nobody.status == 200)
                #expect(known.html.contains(#"<main id="reset-requested">"#))
                // A deployment's gateway says nothing of the dev stack's terminal (DevStackMailTests).
                #expect(!known.html.contains("konto stack"))
                #expect(known.html.replacingOccurrences(of: known.csrf ?? "-", with: "") == nobody.html.replacingOccurrences(of: nobody.csrf ?? "-", with: ""))
            }
        }
    }

    @Test("a required value left out or refused by the services is shown next to its field, with the input kept but the password")
    func fieldErrors() async throws {
        try await GatewayHarness.withGateway { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/signup")
                // The services' own rule refuses the userId and the required name is left out (the page's script would
                // have said so first).
                let refused = try await browser.post("/account/signup", [
                    ("userId", "no address"), ("password", Self.password), ("dateOfBirth", "1912-06-23"), ("name[givenName]", ""),
                ])
                #expect(refused.status == 422)
                #expect(refused.html.contains(#"<p class="field-error" id="error-userId">The provided email is invalid.</p>"#), "\(refused.html)")
                #expect(refused.html.contains(#"<p class="field-error" id="error-name">This field is required.</p>"#), "\(refused.html)")
                #expect(refused.html.contains(#"value="no address""#))
                #expect(refused.html.contains(#"value="1912-06-23""#))
                // Everything typed is kept but the password, which never goes back into a page.
                #expect(!refused.html.contains(Self.password), "\(refused.html)")
                #expect(refused.setCookie("konto_session") == nil)
                let empty = try await browser.post("/account/login", [("userId", ""), ("password", "")])
                #expect(empty.status == 422)
                #expect(empty.html.contains(#"<p class="field-error" id="error-userId">This field is required.</p>"#))
            }
        }
    }

    @Test("an edit sent after the session ended is not dropped without a word: the page says nothing was saved (401), and the ended session's cookie goes")
    func editAfterTheSessionEnded() async throws {
        try await GatewayHarness.withGateway { gateway in
            _ = try await gateway.signUp("edith@example.org", password: Self.password)
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/")
                _ = try await browser.post("/account/login", [("userId", "edith@example.org"), ("password", Self.password)])
                let form = try await browser.get("/account/edit")
                #expect(form.status == 200 && form.html.contains(#"id="field-name-givenName""#), "\(form.html)")
                // Signed out elsewhere while the form was open.
                let token = try #require(browser.cookies["konto_session"])
                #expect(try await gateway.request(.DELETE, "/v1/sessions/current", token: token).status == 204)
                let sent = try await browser.post("/account/edit", [("name[givenName]", "Edith"), ("name[familyName]", "Clarke"), ("_version", "1")])
                #expect(sent.status == 401 && sent.html.contains("Your session ended before your changes were saved."), "\(sent.status) \(sent.html)")
                #expect(sent.html.contains(#"id="login-form""#))
                #expect(browser.cookies["konto_session"] == nil)
            }
        }
    }

    @Test("continuing without an account is offered only when enabled; signing up then keeps that account")
    func anonymous() async throws {
        try await GatewayHarness.withGateway { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                #expect(try await !browser.get("/account/").html.contains("anonymous-form"))
                let refused = try await browser.post("/account/anonymous", [])
                #expect(refused.status == 303 && refused.setCookie("konto_session") == nil)
            }
        }
        try await GatewayHarness.withGateway(configure: { $0.consoleAllowsAnonymous = true }) { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                #expect(try await browser.get("/account/").html.contains(#"<form id="anonymous-form""#))
                let started = try await browser.post("/account/anonymous", [])
                #expect(started.status == 303 && started.setCookie("konto_session") != nil)
                let overview = try await browser.get("/account/")
                #expect(overview.html.contains(#"id="anonymous-notice""#))
                #expect(!overview.html.contains(#"id="edit-link""#))
                let anonymousToken = try #require(browser.cookies["konto_session"])
                let before = try await gateway.request(.GET, "/v1/account", token: anonymousToken).object["accountId"] as? String

                #expect(try await browser.get("/account/signup").html.contains("Keep your account: sign up"))
                let signedUp = try await browser.post("/account/signup", [("userId", "anon@example.org"), ("password", Self.password), ("name[givenName]", "Anon")])
                #expect(signedUp.status == 303)
                let token = try #require(browser.cookies["konto_session"])
                let after = try await gateway.request(.GET, "/v1/account", token: token)
                #expect(after.object["accountId"] as? String == before)
                #expect(after.object["isAnonymous"] as? Bool == false)
            }
        }
    }

    @Test("the gateway's own refusals under the console are pages: no such page, too many requests")
    func refusalsArePages() async throws {
        try await GatewayHarness.withGateway(configure: { $0.credentialsRateLimitPerMinute = 2 }) { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                let missing = try await browser.get("/account/nothing-here")
                #expect(missing.status == 404)
                #expect(missing.headers.first(name: "Content-Type") == "text/html; charset=utf-8")
                #expect(missing.html.contains("There is no such page."))
                #expect(try await browser.get("/account/login").location == "/account/")
                _ = try await browser.get("/account/")
                var statuses: [Int] = []
                for _ in 0..<3 {
                    statuses.append(try await browser.post("/account/login", [("userId", "x@example.org"), ("password", "wrong password")]).status)
                }
                #expect(statuses == [401, 401, 429])
                let throttled = try await browser.post("/account/login", [("userId", "x@example.org"), ("password", "wrong password")])
                #expect(throttled.status == 429)
                #expect(throttled.headers.first(name: "Retry-After") != nil)
                #expect(throttled.html.contains("Too many requests from your address."))
                // The API's refusals stay problem documents.
                #expect(try await gateway.request(.GET, "/v1/nothing").contentType == "application/problem+json")
            }
        }
    }

    @Test("behind a trusted proxy that says HTTPS the cookies are Secure; the console can be turned off")
    func secureCookiesAndOff() async throws {
        try await GatewayHarness.withGateway(configure: {
            $0.clientAddressHeader = "X-Forwarded-For"
            $0.trustedProxies = GatewayLimitsTests.loopback
        }) { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                browser.extraHeaders = [("X-Forwarded-Proto", "https"), ("X-Forwarded-For", "203.0.113.9")]
                let secure = try await browser.get("/account/")
                #expect(secure.setCookie("konto_csrf")?.contains("Secure") == true)
                browser.extraHeaders = [("X-Forwarded-Proto", "http"), ("X-Forwarded-For", "203.0.113.9")]
                browser.cookies = [:]
                let plain = try await browser.get("/account/")
                #expect(plain.setCookie("konto_csrf")?.contains("Secure") == false)
            }
        }
        try await GatewayHarness.withGateway(configure: { $0.consolePath = nil }) { gateway in
            let page = try await gateway.request(.GET, "/account/")
            let script = try await gateway.request(.GET, "/account/console.js")
            #expect(page.status == 404 && script.status == 404)
        }
    }
}
