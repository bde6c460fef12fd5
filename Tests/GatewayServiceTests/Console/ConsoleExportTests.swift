import Foundation
import IdentityService
import NIOHTTP1
import Testing

/// The console's "Download my data" over HTTP against the real services: a CSRF-checked form that answers the API's
/// document as a file, asking for the password once the privileged window has shut.
@Suite("Web console: download my data")
struct ConsoleExportTests {
    static let password = "correct horse battery"

    @Test("the page and its form; the window shut, the password asked (a wrong one refused); the document saved as a file; a form without its CSRF token refused")
    func download() async throws {
        var options = IdentityOptions()
        options.privilegedWindow = .zero
        try await GatewayHarness.withGateway(identityOptions: options) { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/signup")
                _ = try await browser.post("/account/signup", [
                    ("userId", "ada@example.org"), ("password", Self.password), ("name[givenName]", "Ada"), ("name[familyName]", "Lovelace"),
                ])
                #expect(try await browser.get("/account/").html.contains(#"id="export-link""#))
                let page = try await browser.get("/account/export")
                #expect(page.status == 200 && page.html.contains(#"id="export-form""#))

                // No window: the password first.
                let asked = try await browser.post("/account/export", [])
                #expect(asked.html.contains(#"id="export-password-form""#), "\(asked.html)")
                let wrong = try await browser.post("/account/export", [("currentPassword", "not the password")])
                #expect(wrong.html.contains("The password is wrong."))
                let saved = try await browser.post("/account/export", [("currentPassword", Self.password)])
                #expect(saved.status == 200)
                #expect(saved.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true)
                #expect(saved.headers.first(name: "Content-Disposition")?.hasPrefix("attachment; filename=\"konto-account-") == true)
                let document = try #require(try JSONSerialization.jsonObject(with: Data(saved.html.utf8)) as? [String: Any])
                #expect((document["credential"] as? [String: Any])?["userId"] as? String == "ada@example.org")
                let details = try #require((document["account"] as? [String: Any])?["details"] as? [String: Any])
                #expect((details["name"] as? [String: Any])?["familyName"] as? String == "Lovelace")
                #expect(((document["audit"] as? [String: Any])?["entries"] as? [[String: Any]])?.first?["type"] as? String == "account.exported")

                // Another site's form cannot make the browser fetch it.
                let forged = try await browser.post("/account/export", [("currentPassword", Self.password)], csrf: .some(nil))
                #expect(forged.status == 403)
                // Signed out, the page sends the browser to sign in.
                _ = try await browser.post("/account/logout", [])
                let gone = try await browser.post("/account/export", [("currentPassword", Self.password)])
                #expect(gone.status == 303)
            }
        }
    }
}
