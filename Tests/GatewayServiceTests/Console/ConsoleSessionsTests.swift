import Foundation
import IdentityService
import NIOHTTP1
import Testing

/// The console's page of sessions and devices, over HTTP against the real services: each session with its device,
/// ending another (the password asked for once the privileged window is shut), every other, and this one.
@Suite("Web console: sessions and devices")
struct ConsoleSessionsTests {
    static let password = "correct horse battery"
    static let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"

    static func logIn(_ gateway: GatewayHarness.Running, name: String) async throws -> String {
        let answer = try await gateway.request(
            .POST, "/v1/sessions", json: #"{"userId":"ada@example.org","password":"\#(password)"}"#, headers: [("User-Agent", name)]
        )
        return try #require(answer.object["session"] as? [String: Any])["token"] as? String ?? ""
    }

    @Test("the list names each device, marks this one; another device or every other is signed out with the password; this one as a logout; forms need their CSRF token")
    func sessionsPage() async throws {
        // No privileged window: every ending of another session asks for the password.
        var options = IdentityOptions()
        options.privilegedWindow = .zero
        try await GatewayHarness.withGateway(identityOptions: options) { gateway in
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: http)
                browser.extraHeaders = [("User-Agent", Self.chrome)]
                _ = try await browser.get("/account/signup")
                _ = try await browser.post("/account/signup", [
                    ("userId", "ada@example.org"), ("password", Self.password), ("name[givenName]", "Ada"), ("name[familyName]", "Lovelace"),
                ])
                let phone = try await Self.logIn(gateway, name: "Spezi Study/2.1 (iPhone)")
                let overview = try await browser.get("/account/")
                #expect(overview.html.contains(#"id="sessions-link""#))

                let page = try await browser.get("/account/sessions")
                #expect(page.status == 200)
                let ids = page.html.matches(of: /<li id="session-([0-9a-f-]+)" class="session">/).map { String($0.1) }
                #expect(ids.count == 2)
                #expect(page.html.contains("Chrome on Linux") && page.html.contains("Spezi Study/2.1 (iPhone)"))
                #expect(page.html.matches(of: /\(this device\)/).count == 1)
                // Each way in its own words ("signed up", not "signed in with signing up").
                #expect(page.html.contains(">signed up · ") && page.html.contains(">signed in with the password · "), "\(page.html)")
                #expect(!page.html.contains("signed in with signing up"))
                #expect(page.html.contains("network 127.0.0.0/24"))
                #expect(!page.html.contains(phone))
                let (mine, theirs) = (ids[0], ids[1])

                // Another device: the password first, a wrong one refused, then signed out.
                let asked = try await browser.post("/account/sessions/end", [("sessionId", theirs)])
                #expect(asked.html.contains(#"<form id="end-session-form""#) && asked.html.contains(#"name="token" value="\#(theirs)""#))
                #expect(asked.html.contains(#"autocomplete="current-password""#))
                let wrong = try await browser.post("/account/sessions/end", [("token", theirs), ("currentPassword", "not the password")])
                #expect(wrong.html.contains("The password is wrong."))
                #expect(try await gateway.request(.GET, "/v1/account", token: phone).status == 200)
                let ended = try await browser.post("/account/sessions/end", [("token", theirs), ("currentPassword", Self.password)])
                #expect(ended.status == 303 && ended.location == "/account/sessions?done=ended")
                #expect(try await gateway.request(.GET, "/v1/account", token: phone).status == 401)
                let after = try await browser.get("/account/sessions?done=ended")
                #expect(after.html.contains("Signed out of that device.") && !after.html.contains(theirs))
                #expect(!after.html.contains(#"id="end-others-start""#))

                // Every other device.
                let tablet = try await Self.logIn(gateway, name: "tablet")
                _ = try await browser.get("/account/sessions")
                let othersAsked = try await browser.post("/account/sessions/end-others", [])
                #expect(othersAsked.html.contains(#"<form id="end-others-form""#))
                let others = try await browser.post("/account/sessions/end-others", [("currentPassword", Self.password)])
                #expect(others.status == 303 && others.location == "/account/sessions?done=others")
                #expect(try await gateway.request(.GET, "/v1/account", token: tablet).status == 401)

                // A form without its CSRF token ends nothing.
                let forged = try await browser.post("/account/sessions/end", [("sessionId", mine)], csrf: .some(nil))
                #expect(forged.status == 403)
                #expect(try await browser.get("/account/sessions").status == 200)

                // Mail: the notice of new sign-ins is on; turning it off asks for the password (the form keeps the choice).
                let mail = try await browser.get("/account/mail")
                #expect(mail.html.contains(#"id="field-newSignIn" name="newSignIn" value="on" checked"#) && mail.html.contains(#"id="security-notices""#))
                let mailAsked = try await browser.post("/account/mail", [])
                #expect(mailAsked.html.contains(#"<form id="mail-password-form""#) && mailAsked.html.contains(#"name="token" value="off""#))
                let saved = try await browser.post("/account/mail", [("token", "off"), ("currentPassword", Self.password)])
                #expect(saved.status == 303 && saved.location == "/account/mail?done=saved")
                let off = try await browser.get("/account/mail?done=saved")
                #expect(off.html.contains("Saved.") && !off.html.contains("checked"))
                // On again: no password.
                #expect(try await browser.post("/account/mail", [("newSignIn", "on")]).location == "/account/mail?done=saved")
                #expect(try await browser.get("/account/mail").html.contains(#"value="on" checked"#))

                // This device: a logout, no password.
                _ = try await browser.get("/account/sessions")
                let own = try await browser.post("/account/sessions/end", [("sessionId", mine)])
                #expect(own.status == 303 && own.location == "/account/")
                #expect(own.setCookie("konto_session")?.contains("Max-Age=0") == true)
            }
        }
    }
}
