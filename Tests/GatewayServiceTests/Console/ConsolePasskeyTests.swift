import Foundation
import KontoTestSupport
import Testing

/// The console's passkey pages over HTTP, the test playing the browser's WebAuthn API with a software passkey: the
/// options the page carries, the answers it posts back, and each refusal's page. (Chromium's virtual authenticator
/// plays the same in ConsoleBrowserTests.)
@Suite("Web console: passkeys")
struct ConsolePasskeyTests {
    static let password = "correct horse battery"

    /// WebAuthn's options a page carries for its script (the form's `data-options`, HTML-escaped).
    static func options(_ html: String, form: String) throws -> [String: Any] {
        let marker = #"<form id="\#(form)""#
        let start = try #require(html.range(of: marker), "no form \(form) in the page")
        let rest = html[start.upperBound...]
        let attribute = try #require(rest.range(of: #"data-options=""#))
        let value = rest[attribute.upperBound...].prefix { $0 != "\"" }
        let json = String(value).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
        return try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    @Test("add a passkey from the page's options; refusals show the page again saying why; it signs in alone, answers the password's challenge, and confirms it is you")
    func passkeys() async throws {
        try await GatewayHarness.withGateway { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                let authenticator = SoftwareAuthenticator(rpId: "localhost", origin: "http://localhost:8080")
                _ = try await browser.get("/account/signup")
                _ = try await browser.post("/account/signup", [
                    ("userId", "ada@example.org"), ("password", Self.password), ("name[givenName]", "Ada"), ("name[familyName]", "Lovelace"),
                ])
                let factors = try await browser.get("/account/factors")
                #expect(factors.html.contains(#"id="passkey-start-submit""#))
                let start = try await browser.post("/account/factors/passkey", [])
                #expect(start.status == 200 && start.html.contains(#"<main id="passkey">"#))
                var options = try Self.options(start.html, form: "passkey-create-form")
                authenticator.remember(userHandle: try #require((options["user"] as? [String: Any])?["id"] as? String))

                // A page of another origin, and no WebAuthn answer at all: the page again, with the reason.
                var evil = SoftwareAuthenticator.Tampering()
                evil.origin = "https://evil.example"
                let wrongOrigin = try await browser.post("/account/factors/passkey/register", [
                    ("credential", try Self.json(authenticator.registrationJSON(challenge: try #require(options["challenge"] as? String), tampering: evil))),
                ])
                #expect(wrongOrigin.status == 422 && wrongOrigin.html.contains("webauthn.wrongOrigin"))
                let malformed = try await browser.post("/account/factors/passkey/register", [("credential", "{}")])
                #expect(malformed.status == 400)
                #expect(malformed.html.contains("The passkey&#39;s answer is not WebAuthn&#39;s JSON form") || malformed.html.contains("The passkey&#x27;s answer is not WebAuthn&#x27;s JSON form"))
                // Fresh options come with the refusal; they make the passkey.
                options = try Self.options(malformed.html, form: "passkey-create-form")
                let added = try await browser.post("/account/factors/passkey/register", [
                    ("name", "Laptop"), ("credential", try Self.json(authenticator.registrationJSON(challenge: try #require(options["challenge"] as? String)))),
                ])
                #expect(added.status == 303 && added.location == "/account/factors?done=passkey")
                #expect(try await browser.get("/account/factors").html.contains("Laptop"))

                // Signing in with it alone, from the login page's options; a wrong answer is the login page again.
                _ = try await browser.post("/account/logout", [])
                let login = try await browser.get("/account/")
                let loginOptions = try Self.options(login.html, form: "passkey-login-form")
                #expect(loginOptions["userVerification"] as? String == "required")
                let refused = try await browser.post("/account/login/passkey", [("credential", try Self.json(SoftwareAuthenticator(rpId: "localhost", origin: "http://localhost:8080").assertionJSON(challenge: try #require(loginOptions["challenge"] as? String))))])
                #expect(refused.status == 401 && refused.html.contains("That passkey did not sign you in."))
                let signedIn = try await browser.post("/account/login/passkey", [("credential", try Self.json(authenticator.assertionJSON(challenge: try #require(loginOptions["challenge"] as? String))))])
                #expect(signedIn.status == 303 && signedIn.setCookie("konto_session") != nil)

                // The password's challenge: its passkey options wait in a cookie beside it for the code page.
                _ = try await browser.post("/account/logout", [])
                let password = try await browser.post("/account/login", [("userId", "ada@example.org"), ("password", Self.password)])
                #expect(password.location == "/account/second-factor")
                let optionsCookie = try #require(password.setCookie("konto_challenge_passkey"))
                #expect(optionsCookie.contains("HttpOnly") && optionsCookie.contains("SameSite=Strict"))
                let codePage = try await browser.get("/account/second-factor")
                let factorOptions = try Self.options(codePage.html, form: "passkey-factor-form")
                let factorChallenge = try #require(factorOptions["challenge"] as? String)
                let notAccepted = try await browser.post("/account/second-factor/passkey", [("credential", "{}")])
                #expect(notAccepted.status == 400 && notAccepted.html.contains("That passkey was not accepted"))
                let completed = try await browser.post("/account/second-factor/passkey", [("credential", try Self.json(authenticator.assertionJSON(challenge: factorChallenge)))])
                #expect(completed.status == 303 && completed.setCookie("konto_session") != nil)
                #expect(completed.setCookie("konto_challenge_passkey")?.contains("Max-Age=0") == true)

                // Confirming it is you with it (the reauthentication page's own options).
                let reauthenticate = try await browser.get("/account/reauthenticate")
                let reauthOptions = try Self.options(reauthenticate.html, form: "passkey-reauthenticate-form")
                let wrong = try await browser.post("/account/reauthenticate/passkey", [("credential", try Self.json(SoftwareAuthenticator(rpId: "localhost", origin: "http://localhost:8080").assertionJSON(challenge: try #require(reauthOptions["challenge"] as? String))))])
                #expect(wrong.status == 401 && wrong.html.contains("That passkey was not accepted."))
                let confirmed = try await browser.post("/account/reauthenticate/passkey", [("credential", try Self.json(authenticator.assertionJSON(challenge: try #require(reauthOptions["challenge"] as? String))))])
                #expect(confirmed.status == 303 && confirmed.location == "/account/factors?done=reauthenticated")
            }
        }
    }

    @Test("without a session or a challenge the passkey forms lead back to the login")
    func signedOut() async throws {
        try await GatewayHarness.withGateway { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                _ = try await browser.get("/account/")
                for path in ["/account/factors/passkey", "/account/factors/passkey/register", "/account/second-factor/passkey", "/account/reauthenticate/passkey"] {
                    let page = try await browser.post(path, [("credential", "{}")])
                    #expect(page.status == 303 && page.location == "/account/", "\(path)")
                }
            }
        }
    }
}
