import Foundation
import GatewayService
import IdentityService
import KontoContracts
import KontoTesting
import NIOHTTP1
import Testing

/// The admin console over HTTP, through a running gateway and the real services: where it is served, its sealed
/// session cookie and CSRF protection, a key refused later ending the session, and an action landing through the
/// admin API. (The whole journey runs in Chromium: ConsoleBrowserTests.)
@Suite("Admin console over HTTP")
struct AdminConsoleHTTPTests {
    @Test("on the admin listener only; its cookies are HttpOnly, SameSite=Strict on its path, the session sealed; forms need the CSRF token; a revoked key ends the session")
    func cookiesFormsAndKeys() async throws {
        try await GatewayHarness.withGateway(configure: { $0.adminPort = 0 }, identityOptions: GatewayAdminTests.identityOptions()) { gateway in
            let root = GatewayAdminTests.bootstrap.text
            let adminURL = try #require(gateway.adminURL)
            try await ConsoleBrowser.withClient { http in
                // Not on the public listener.
                var stranger = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                #expect(try await stranger.get("/admin/console").status == 404)

                var browser = ConsoleBrowser(baseURL: adminURL, http: http)
                let signIn = try await browser.get("/admin/console")
                #expect(signIn.status == 200 && signIn.html.contains(#"<main id="admin-sign-in">"#))
                let policy = try #require(signIn.headers.first(name: "Content-Security-Policy"))
                #expect(policy.contains("default-src 'none'") && policy.contains("frame-ancestors 'none'") && !policy.contains("unsafe-inline"))
                #expect(signIn.headers.first(name: "Cache-Control") == "no-store")
                let csrf = try #require(signIn.setCookie("konto_admin_csrf"))
                #expect(csrf.contains("HttpOnly") && csrf.contains("SameSite=Strict") && csrf.contains("Path=/admin/console"))

                // Without the form's token, or from another site, nothing is signed in.
                let forged = try await browser.post("/admin/console/sign-in", [("key", root)], csrf: .some(nil))
                #expect(forged.status == 403 && forged.setCookie("konto_admin") == nil)
                browser.extraHeaders = [("Sec-Fetch-Site", "cross-site")]
                #expect(try await browser.post("/admin/console/sign-in", [("key", root)]).status == 403)
                browser.extraHeaders = []
                let wrong = try await browser.post("/admin/console/sign-in", [("key", "kop_wrong")])
                #expect(wrong.status == 401 && wrong.html.contains("not a valid operator key") && !wrong.html.contains("kop_wrong"))

                let signedIn = try await browser.post("/admin/console/sign-in", [("key", root)])
                #expect(signedIn.status == 303 && signedIn.location == "/admin/console/accounts")
                let session = try #require(signedIn.setCookie("konto_admin"))
                #expect(session.contains("HttpOnly") && session.contains("SameSite=Strict") && session.contains("Path=/admin/console") && session.contains("Max-Age=28800"))
                // Sealed: the key is not in the cookie.
                let sealed = try #require(browser.cookies["konto_admin"])
                #expect(!sealed.contains(String(root.dropFirst(4).prefix(12))))
                let accounts = try await browser.get("/admin/console/accounts")
                #expect(accounts.status == 200 && accounts.html.contains(#"<main id="admin-accounts">"#) && accounts.html.contains("bootstrap"))

                // An action goes through the admin API: the account is disabled.
                let user = try await gateway.signUp("console-admin@example.org")
                let accountPage = try await browser.get("/admin/console/accounts/\(user.accountId)")
                // Its session, with how and from where it signed in.
                #expect(accountPage.html.contains("<td>signUp · 127.0.0.0/24"), "\(accountPage.html)")
                let disabled = try await browser.post("/admin/console/accounts/\(user.accountId)/disable", [])
                #expect(disabled.status == 303 && disabled.location == "/admin/console/accounts/\(user.accountId)?done=disable")
                var admin = gateway
                admin.baseURL = adminURL
                let record = try await admin.request(.GET, "/admin/v1/accounts/\(user.accountId)", token: root)
                #expect((record.object["credentials"] as? [String: Any])?["disabledAt"] != nil)

                // A cookie altered is no session; neither is another key's cookie once that key is revoked.
                var tampered = browser
                var altered = Array(sealed)
                altered[10] = altered[10] == "A" ? "B" : "A"
                tampered.cookies["konto_admin"] = String(altered)
                let refused = try await tampered.get("/admin/console/accounts")
                #expect(refused.status == 303 && refused.location == "/admin/console/")
                let made = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"temporary","scopes":["accounts:read"]}"#, token: root)
                let temporary = try #require(made.object["secret"] as? String)
                let temporaryId = try #require((made.object["key"] as? [String: Any])?["id"] as? String)
                var other = ConsoleBrowser(baseURL: adminURL, http: http)
                _ = try await other.get("/admin/console")
                #expect(try await other.post("/admin/console/sign-in", [("key", temporary)]).status == 303)
                #expect(try await other.get("/admin/console/accounts").status == 200)
                #expect(try await admin.request(.DELETE, "/admin/v1/keys/\(temporaryId)", token: root).status == 204)
                let ended = try await other.get("/admin/console/accounts")
                #expect(ended.status == 303 && ended.location == "/admin/console/?ended=1" && ended.setCookie("konto_admin")?.contains("Max-Age=0") == true)

                // Signing out drops the cookie.
                let out = try await browser.post("/admin/console/sign-out", [])
                #expect(out.status == 303 && out.setCookie("konto_admin")?.contains("Max-Age=0") == true)
                #expect(try await browser.get("/admin/console/accounts").location == "/admin/console/")
            }
        }
    }
}
