import Crypto
import Foundation
import GatewayService
import IdentityService
import KontoWebAuthn
import NIOHTTP1
import Testing

/// Konto as an OpenID Provider in the browser, over HTTP against the real services: the authorization request waits
/// through the console's sign-in, a third party's consent page, the code back to the client.
@Suite("Web console: signing in to applications")
struct ConsoleOpenIDTests {
    static let password = "correct horse battery"

    static func options() throws -> IdentityOptions {
        var options = IdentityOptions()
        options.openID = try OpenIDProviderSettings(
            issuer: "http://localhost:8080", keys: OpenIDSigningKeys([OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)]),
            clients: OpenIDClients([
                OpenIDClient(id: "study-app", name: "Study App", authentication: .none, redirectURIs: ["https://app.example.org/callback"],
                             postLogoutRedirectURIs: ["https://app.example.org/signed-out"], scopes: ["openid", "email", "profile"]),
            ])
        )
        return options
    }

    static func query(scope: String = "openid email", extra: String = "") -> (query: String, verifier: String) {
        let verifier = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        let challenge = Base64URL.encode(Array(SHA256.hash(data: Data(verifier.utf8))))
        let scope = scope.replacingOccurrences(of: " ", with: "%20")
        return ("response_type=code&client_id=study-app&redirect_uri=https%3A%2F%2Fapp.example.org%2Fcallback&scope=\(scope)&state=xyz&nonce=abc"
            + "&code_challenge=\(challenge)&code_challenge_method=S256\(extra)", verifier)
    }

    /// The redirect a "continue" page sends the browser on to.
    static func continued(_ page: ConsoleBrowser.Page) -> URLComponents? {
        page.html.firstMatch(of: /<meta http-equiv="refresh" content="0; url=([^"]*)">/)
            .map { String($0.output.1).replacingOccurrences(of: "&amp;", with: "&") }
            .flatMap(URLComponents.init(string:))
    }

    static func parameter(_ url: URLComponents?, _ name: String) -> String? {
        url?.queryItems?.first { $0.name == name }?.value
    }

    @Test("sign in, consent, code; consent remembered; a denial goes back as access_denied; prompt=login signs in again; an unknown client is refused on the page; the consent form needs its CSRF token and the waiting request")
    func flow() async throws {
        // Anonymous accounts allowed: the setup page offers them, except to a sign-in an application waits for.
        try await GatewayHarness.withGateway(configure: { $0.consoleAllowsAnonymous = true }, identityOptions: try Self.options()) { gateway in
            _ = try await gateway.signUp("ada@example.org", password: Self.password)
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                #expect(try await browser.get("/account/").html.contains(#"id="anonymous-form""#))
                let (query, verifier) = Self.query()
                let entry = try await browser.get("/oauth2/authorize?" + query)
                #expect(entry.status == 303 && entry.location == "/account/authorize?" + query)
                // OpenID Connect Core 3.1.2.1: the endpoint takes a form POST as well; it comes along as the query.
                let fields = query.split(separator: "&").map { pair in
                    let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                    return (parts[0], parts.count > 1 ? parts[1] : "")
                }
                let posted = try await browser.post("/oauth2/authorize", fields, csrf: .some(nil))
                let postedQuery = try #require(posted.location.flatMap(URLComponents.init(string:)))
                #expect(posted.status == 303 && postedQuery.path == "/account/authorize", "\(posted.status) \(posted.location ?? "")")
                #expect(Set(postedQuery.queryItems?.map { "\($0.name)=\($0.value ?? "")" } ?? []) == Set(fields.map { "\($0.0)=\($0.1)" }))
                #expect(try await GatewayOpenIDTests.form(gateway, "/oauth2/authorize", [("client_id", "study-app")], authorization: nil, contentType: "application/json").status == 415)
                let waiting = try await browser.get("/account/authorize?" + query)
                #expect(waiting.status == 303 && waiting.location == "/account/?done=signInToContinue" && waiting.setCookie("konto_authorize") != nil)
                let signIn = try await browser.get("/account/?done=signInToContinue")
                #expect(signIn.html.contains("Sign in to continue to the application."))
                // An anonymous session cannot sign in to an application: it is not offered on the way there.
                #expect(!signIn.html.contains(#"id="anonymous-form""#), "\(signIn.html)")
                let loggedIn = try await browser.post("/account/login", [("userId", "ada@example.org"), ("password", Self.password)])
                #expect(loggedIn.status == 303 && loggedIn.location == "/account/authorize/resume")

                // The third party asks: the consent page names it and what it asks for.
                let consent = try await browser.get("/account/authorize/resume")
                #expect(consent.status == 200 && consent.html.contains("Study App") && consent.html.contains("See your email address"), "\(consent.html)")
                let forged = try await browser.post("/account/authorize/consent", [("decision", "allow")], csrf: .some(nil))
                #expect(forged.status == 403)
                let allowed = try await browser.post("/account/authorize/consent", [("decision", "allow")])
                let back = Self.continued(allowed)
                #expect(allowed.status == 200 && back?.host == "app.example.org" && Self.parameter(back, "state") == "xyz")
                #expect(Self.parameter(back, "iss") == "http://localhost:8080")
                let code = try #require(Self.parameter(back, "code"))
                #expect(allowed.setCookie("konto_authorize")?.contains("Max-Age=0") == true)

                // The public client exchanges it with its verifier.
                let tokens = try await GatewayOpenIDTests.form(gateway, "/oauth2/token", [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://app.example.org/callback"), ("code_verifier", verifier),
                    ("client_id", "study-app"),
                ], authorization: nil)
                #expect(tokens.status == 200 && tokens.object["id_token"] is String)

                // Remembered: straight back with a code.
                let again = try await browser.get("/account/authorize?" + Self.query().query)
                let direct = again.location.flatMap(URLComponents.init(string:))
                #expect(again.status == 303 && direct?.host == "app.example.org" && Self.parameter(direct, "code") != nil)

                // More than was consented to: the page again; declined, access_denied goes back.
                let wider = try await browser.get("/account/authorize?" + Self.query(scope: "openid email profile").query)
                #expect(wider.status == 200 && wider.html.contains("See your name"))
                let denied = try await browser.post("/account/authorize/consent", [("decision", "deny")])
                #expect(Self.parameter(Self.continued(denied), "error") == "access_denied")
                // The waiting request is gone with its answer: a consent form now has nothing to answer.
                let stale = try await browser.post("/account/authorize/consent", [("decision", "allow")])
                #expect(stale.status == 400)

                // prompt=login (or max_age=0), as any site could send a browser: the sign-in page, and the session
                // still lives; abandoned, nothing ended.
                let before = try #require(browser.cookies["konto_session"])
                for extra in ["&prompt=login", "&max_age=0"] {
                    let fresh = try await browser.get("/account/authorize?" + Self.query(extra: extra).query)
                    #expect(fresh.status == 303 && fresh.location == "/account/sign-in-again" && fresh.setCookie("konto_session") == nil, "\(extra)")
                    let page = try await browser.get("/account/sign-in-again")
                    #expect(page.status == 200 && page.html.contains("The application asks you to sign in again."), "\(extra)")
                    #expect(try await gateway.request(.GET, "/v1/account", token: before).status == 200, "\(extra): the session lives on")
                }
                #expect(try await browser.get("/account/").html.contains("Your account"), "still signed in")
                // Signed in again: the new session replaces the one before, which ends only now.
                let relogged = try await browser.post("/account/login", [("userId", "ada@example.org"), ("password", Self.password)])
                #expect(relogged.location == "/account/authorize/resume")
                let resumed = try await browser.get("/account/authorize/resume")
                #expect(Self.parameter(Self.continued(resumed), "code") != nil)
                #expect(try #require(browser.cookies["konto_session"]) != before)
                #expect(try await gateway.request(.GET, "/v1/account", token: before).status == 401, "the replaced session ended")
                #expect(try await gateway.request(.GET, "/v1/account", token: try #require(browser.cookies["konto_session"])).status == 200)
                // Without a waiting request the page is the home page.
                var stranger = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                #expect(try await stranger.get("/account/sign-in-again").location == "/account/")

                // The account page lists the application; removing it ends its access and its consent.
                let applications = try await browser.get("/account/applications")
                #expect(applications.status == 200 && applications.html.contains("Study App") && applications.html.contains("See your email address"))
                let api = try await gateway.request(.GET, "/v1/account/applications", token: try #require(browser.cookies["konto_session"]))
                #expect(((api.object["applications"] as? [[String: Any]])?.first)?["clientId"] as? String == "study-app")
                let removed = try await browser.post("/account/applications/revoke", [("clientId", "study-app")])
                #expect(removed.status == 303 && removed.location == "/account/applications?done=revoked")
                #expect(try await browser.get("/account/applications?done=revoked").html.contains(#"id="no-applications""#))
                #expect(try await GatewayOpenIDTests.form(gateway, "/oauth2/token", [
                    ("grant_type", "authorization_code"), ("code", "x"), ("redirect_uri", "https://app.example.org/callback"), ("code_verifier", verifier),
                    ("client_id", "study-app"),
                ], authorization: nil).object["error"] as? String == "invalid_grant")
                let missing = try await browser.post("/account/applications/revoke", [("clientId", "study-app")])
                #expect(missing.status == 404)
                let asksAgain = try await browser.get("/account/authorize?" + Self.query().query)
                #expect(asksAgain.status == 200 && asksAgain.html.contains(#"id="consent-form""#), "consent asked again")
                let deleted = try await gateway.request(.DELETE, "/v1/account/applications/study-app", token: try #require(browser.cookies["konto_session"]))
                #expect(deleted.status == 404 && deleted.code == "account.applicationNotFound")

                // An unknown client: refused on the page, never redirected.
                let unknown = try await browser.get("/account/authorize?" + Self.query().query.replacingOccurrences(of: "client_id=study-app", with: "client_id=stranger"))
                #expect(unknown.status == 400 && unknown.location == nil && unknown.html.contains("not known"))
            }
        }
    }

    @Test("RP-initiated logout: the session's own id_token_hint signs out at once and goes back with the state; without one the person is asked (CSRF-checked); a redirect URI not registered is refused; a form POST comes along")
    func logout() async throws {
        try await GatewayHarness.withGateway(identityOptions: try Self.options()) { gateway in
            _ = try await gateway.signUp("ada@example.org", password: Self.password)
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/")
                _ = try await browser.post("/account/login", [("userId", "ada@example.org"), ("password", Self.password)])
                let (query, verifier) = Self.query()
                _ = try await browser.get("/account/authorize?" + query)
                let allowed = try await browser.post("/account/authorize/consent", [("decision", "allow")])
                let code = try #require(Self.parameter(Self.continued(allowed), "code"))
                let tokens = try await GatewayOpenIDTests.form(gateway, "/oauth2/token", [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://app.example.org/callback"), ("code_verifier", verifier),
                    ("client_id", "study-app"),
                ], authorization: nil)
                let hint = try #require(tokens.object["id_token"] as? String)
                let accessToken = try #require(tokens.object["access_token"] as? String)
                let signedOut = "https%3A%2F%2Fapp.example.org%2Fsigned-out"

                // The endpoint is the console's.
                let entry = try await browser.get("/oauth2/logout?client_id=study-app")
                #expect(entry.status == 303 && entry.location == "/account/end-session?client_id=study-app")

                // Without a hint: asked, and staying signed in ends nothing; the form needs its CSRF token.
                let request = "client_id=study-app&post_logout_redirect_uri=\(signedOut)&state=abc"
                let asked = try await browser.get("/account/end-session?" + request)
                #expect(asked.status == 200 && asked.html.contains("Study App") && asked.html.contains(#"id="end-session-form""#), "\(asked.html)")
                let stay = try await browser.post("/account/end-session", [("request", request), ("decision", "stay")])
                #expect(stay.status == 303 && stay.location == "/account/" && browser.cookies["konto_session"] != nil)
                let forged = try await browser.post("/account/end-session", [("request", request), ("decision", "signOut")], csrf: .some(nil))
                #expect(forged.status == 403 && browser.cookies["konto_session"] != nil)

                // Refused on the page: a redirect URI one character off, a hint Konto did not sign.
                let off = try await browser.get("/account/end-session?id_token_hint=\(hint)&post_logout_redirect_uri=\(signedOut)x")
                #expect(off.status == 400 && off.location == nil && off.html.contains("not one the application registered"))
                let forgedHint = try await browser.get("/account/end-session?id_token_hint=\(hint.dropLast(4))AAAA")
                #expect(forgedHint.status == 400 && forgedHint.location == nil)

                // The session's own hint: signed out at once, back with the state; the access token is refused.
                let done = try await browser.get("/account/end-session?id_token_hint=\(hint)&post_logout_redirect_uri=\(signedOut)&state=abc")
                #expect(done.status == 303 && done.location == "https://app.example.org/signed-out?state=abc")
                #expect(done.setCookie("konto_session")?.contains("Max-Age=0") == true && browser.cookies["konto_session"] == nil)
                let userInfo = try await gateway.request(.GET, "/oauth2/userinfo", token: accessToken)
                #expect(userInfo.status == 401)

                // Signed in again, confirmed on the page (a form POST to the endpoint, no hint): signed out.
                _ = try await browser.get("/account/")
                _ = try await browser.post("/account/login", [("userId", "ada@example.org"), ("password", Self.password)])
                let posted = try await browser.post("/oauth2/logout", [("client_id", "study-app"), ("post_logout_redirect_uri", "https://app.example.org/signed-out"), ("state", "d e")], csrf: .some(nil))
                let forwarded = try #require(posted.location)
                #expect(posted.status == 303 && forwarded.hasPrefix("/account/end-session?client_id=study-app&"))
                let confirm = try await browser.get(forwarded)
                #expect(confirm.status == 200 && confirm.html.contains(#"id="end-session-confirm""#))
                let confirmed = try await browser.post("/account/end-session", [("request", String(forwarded.dropFirst("/account/end-session?".count))), ("decision", "signOut")])
                let back = Self.continued(confirmed)
                #expect(confirmed.status == 200 && back?.host == "app.example.org" && back?.path == "/signed-out" && Self.parameter(back, "state") == "d e")
                #expect(browser.cookies["konto_session"] == nil)
                // A POST that is no form, or too large: refused by the gateway.
                let json = try await GatewayOpenIDTests.form(gateway, "/oauth2/logout", [("client_id", "study-app")], authorization: nil, contentType: "application/json")
                #expect(json.status == 415)
                let huge = try await GatewayOpenIDTests.form(gateway, "/oauth2/logout", [("id_token_hint", String(repeating: "a", count: 17_000))], authorization: nil)
                #expect(huge.status == 413)
            }
        }
    }
}
