import Foundation
import GatewayService
import IdentityService
import KontoContracts
import KontoTesting
import NIOHTTP1
import Testing

/// The admin console's OpenID Provider clients over HTTP, through a running gateway and the real services: the file's
/// shown read-only, one registered with its secret shown once, a refused registration storing nothing, a new secret,
/// a removal; each checked at the admin API and, for the secrets, at the token endpoint.
@Suite("Admin console over HTTP: OpenID clients", .timeLimit(.minutes(4)))
struct AdminConsoleClientsTests {
    /// The bootstrap operator key, and Konto as an OpenID Provider with one client in its file (study-app).
    static func options() throws -> IdentityOptions {
        var options = GatewayAdminTests.identityOptions()
        options.openID = try ConsoleOpenIDTests.options().openID
        return options
    }

    /// The secret a page shows once, if it shows one.
    static func madeSecret(_ page: ConsoleBrowser.Page) -> String? {
        page.html.firstMatch(of: /<code id="made-secret">([^<]*)<\/code>/).map { String($0.output.1) }
    }

    /// How the token endpoint takes a client's secret: a code it never made is `invalid_grant` once the client is
    /// authenticated, `invalid_client` when its secret is refused.
    static func tokenError(_ gateway: GatewayHarness.Running, _ id: String, _ secret: String) async throws -> String? {
        let answer = try await GatewayOpenIDTests.form(
            gateway, "/oauth2/token", [("grant_type", "authorization_code"), ("code", "never-made"), ("redirect_uri", "https://crm.example.org/callback")],
            authorization: GatewayOpenIDTests.basic(id, secret)
        )
        return answer.object["error"] as? String
    }

    static let crm: [(String, String)] = [
        ("id", "crm"), ("name", "CRM"), ("type", "confidential"), ("authentication", "client_secret_basic"), ("jwks", ""),
        ("redirectUris", "https://crm.example.org/callback\r\nhttps://crm.example.org/other\r\n"), ("postLogoutRedirectUris", "https://crm.example.org/bye"),
        ("scopes[]", "openid"), ("scopes[]", "email"), ("idTokenAlgorithm", "ES256"), ("sectorIdentifier", ""),
    ]

    @Test("the file's clients read-only; a client registered with its secret shown once; a bad redirect URI refused on the page, nothing stored; a new secret with an overlap; removed; forms need the CSRF token")
    func clients() async throws {
        try await GatewayHarness.withGateway(configure: { $0.adminPort = 0 }, identityOptions: try Self.options()) { gateway in
            let root = GatewayAdminTests.bootstrap.text
            let adminURL = try #require(gateway.adminURL)
            var admin = gateway
            admin.baseURL = adminURL
            func listedIds() async throws -> [String] {
                let listed = try await admin.request(.GET, "/admin/v1/oidc/clients", token: root)
                return (listed.object["clients"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            }
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: adminURL, http: http)
                _ = try await browser.get("/admin/console")
                #expect(try await browser.post("/admin/console/sign-in", [("key", root)]).status == 303)

                // The file's client, with no action: it changes only in the file.
                let list = try await browser.get("/admin/console/clients")
                #expect(list.status == 200 && list.html.contains(#"<main id="admin-clients">"#) && list.html.contains(#"id="nav-clients""#), "\(list.html)")
                #expect(list.html.contains(#"<tr data-client="study-app"><td>study-app</td><td>Study App</td><td>public</td><td>the deployment's file</td>"#), "\(list.html)")
                #expect(list.html.contains("https://app.example.org/callback") && list.html.contains("email openid profile"))
                #expect(!list.html.contains("/clients/remove") && !list.html.contains("/clients/rotate"))
                #expect(list.html.contains(#"id="client-form""#))

                // Without the form's token, or from another site, nothing is registered.
                let forged = try await browser.post("/admin/console/clients/add", Self.crm, csrf: .some(nil))
                #expect(forged.status == 403 && Self.madeSecret(forged) == nil)
                browser.extraHeaders = [("Sec-Fetch-Site", "cross-site")]
                #expect(try await browser.post("/admin/console/clients/add", Self.crm).status == 403)
                browser.extraHeaders = []
                #expect(try await listedIds() == ["study-app"])

                // Registered: its secret shown this once, never listed again.
                let added = try await browser.post("/admin/console/clients/add", Self.crm)
                #expect(added.status == 200 && added.html.contains("Registered crm."), "\(added.html)")
                let secret = try #require(Self.madeSecret(added), "\(added.html)")
                #expect(secret.hasPrefix("kcs_") && secret.count == 47)
                let listed = try await browser.get("/admin/console/clients")
                #expect(!listed.html.contains(secret) && !listed.html.contains("made-secret"))
                #expect(listed.html.contains(#"<tr data-client="crm"><td>crm</td><td>CRM</td><td>confidential · client_secret_basic</td><td>this API</td>"#), "\(listed.html)")
                #expect(listed.html.contains("https://crm.example.org/other<br>after sign-out: https://crm.example.org/bye") && listed.html.contains("email openid"))
                #expect(listed.html.contains(#"action="/admin/console/clients/rotate""#) && listed.html.contains(#"action="/admin/console/clients/remove""#))
                let stored = try await admin.request(.GET, "/admin/v1/oidc/clients", token: root)
                let crm = try #require((stored.object["clients"] as? [[String: Any]])?.first { $0["id"] as? String == "crm" })
                #expect(crm["redirectUris"] as? [String] == ["https://crm.example.org/callback", "https://crm.example.org/other"])
                #expect(crm["scopes"] as? [String] == ["email", "openid"] && crm["authentication"] as? String == "client_secret_basic" && crm["source"] as? String == "api")
                #expect(!stored.text.contains(secret))
                // The token endpoint takes it (the client is authenticated; only the made-up code is refused).
                #expect(try await Self.tokenError(gateway, "crm", secret) == "invalid_grant")
                #expect(try await Self.tokenError(gateway, "crm", "kcs_wrong") == "invalid_client")

                // A redirect URI that is no https URL: the API's reason on the page, the form kept, nothing stored.
                var bad = Self.crm.filter { $0.0 != "id" && $0.0 != "redirectUris" }
                bad += [("id", "ftp-app"), ("redirectUris", "ftp://files.example.org/callback")]
                let refused = try await browser.post("/admin/console/clients/add", bad)
                #expect(refused.status == 422 && refused.html.contains(#"id="form-error""#) && refused.html.contains("redirectUris: &quot;ftp://files.example.org/callback&quot;"), "\(refused.html)")
                #expect(refused.html.contains(#"value="ftp-app""#) && Self.madeSecret(refused) == nil)
                #expect(try await listedIds() == ["study-app", "crm"])
                // A taken id: the API's conflict, nothing made.
                let taken = try await browser.post("/admin/console/clients/add", Self.crm)
                #expect(taken.status == 409 && taken.html.contains("exists already") && Self.madeSecret(taken) == nil, "\(taken.html)")

                // private_key_jwt: its keys from the JWK Set given, no secret made; a private key pasted is refused, not dropped.
                let jwkSet = KontoAdminClientsTests.publicKey(kid: "signer-key").jwkSet
                var signer = Self.crm.filter { !["id", "authentication", "jwks"].contains($0.0) }
                signer += [("id", "signer"), ("authentication", "private_key_jwt")]
                let leaked = try await browser.post("/admin/console/clients/add", signer + [("jwks", jwkSet.replacingOccurrences(of: #""use":"sig""#, with: #""use":"sig","d":"c2VjcmV0""#))])
                #expect(leaked.status == 400 && leaked.html.contains("holds a private key"), "\(leaked.html)")
                let keyed = try await browser.post("/admin/console/clients/add", signer + [("jwks", jwkSet)])
                #expect(keyed.status == 200 && Self.madeSecret(keyed) == nil, "\(keyed.html)")
                #expect(keyed.html.contains("<td>confidential · private_key_jwt (keys signer-key)</td>"), "\(keyed.html)")
                let signerRow = try #require(keyed.html.firstMatch(of: /<tr data-client="signer">.*?<\/tr>/.dotMatchesNewlines()).map { String($0.output) })
                #expect(!signerRow.contains("/clients/rotate") && signerRow.contains("/clients/remove"))
                #expect(try await listedIds() == ["study-app", "crm", "signer"])

                // A new secret, the previous one kept an hour: both taken; then another with none kept.
                let rotated = try await browser.post("/admin/console/clients/rotate", [("client", "crm"), ("keepPreviousSeconds", "3600")])
                let second = try #require(Self.madeSecret(rotated), "\(rotated.html)")
                #expect(rotated.status == 200 && second != secret && rotated.html.contains("still accepted until"))
                #expect(rotated.html.contains("previous secret until"))
                #expect(try await Self.tokenError(gateway, "crm", second) == "invalid_grant")
                #expect(try await Self.tokenError(gateway, "crm", secret) == "invalid_grant")
                let again = try await browser.post("/admin/console/clients/rotate", [("client", "crm"), ("keepPreviousSeconds", "0")])
                let third = try #require(Self.madeSecret(again), "\(again.html)")
                #expect(again.html.contains("The previous one is refused from now on."))
                #expect(try await Self.tokenError(gateway, "crm", third) == "invalid_grant")
                #expect(try await Self.tokenError(gateway, "crm", second) == "invalid_client")
                #expect(try await Self.tokenError(gateway, "crm", secret) == "invalid_client")
                // Rotation needs the token too.
                #expect(try await browser.post("/admin/console/clients/rotate", [("client", "crm")], csrf: .some(nil)).status == 403)

                // The file's client is not the console's to remove; an unknown one is said so.
                let inFile = try await browser.post("/admin/console/clients/remove", [("client", "study-app")])
                #expect(inFile.status == 409 && inFile.html.contains("change it there"), "\(inFile.html)")
                let unknown = try await browser.post("/admin/console/clients/remove", [("client", "nobody")])
                #expect(unknown.status == 404 && unknown.html.contains("No OpenID Provider client has the id"), "\(unknown.html)")

                // Removed: gone from the page, the API and the token endpoint.
                #expect(try await browser.post("/admin/console/clients/remove", [("client", "crm")], csrf: .some(nil)).status == 403)
                #expect(try await listedIds() == ["study-app", "crm", "signer"])
                let removed = try await browser.post("/admin/console/clients/remove", [("client", "crm")])
                #expect(removed.status == 200 && removed.html.contains("Removed crm: 0 grants ended, 0 consents removed."), "\(removed.html)")
                #expect(!removed.html.contains(#"data-client="crm""#))
                #expect(try await listedIds() == ["study-app", "signer"])
                #expect(try await Self.tokenError(gateway, "crm", third) == "invalid_client")

                // A key without clients:write sees the scope it lacks.
                let made = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"reader","scopes":["accounts:read"]}"#, token: root)
                let reader = try #require(made.object["secret"] as? String)
                var other = ConsoleBrowser(baseURL: adminURL, http: http)
                _ = try await other.get("/admin/console")
                #expect(try await other.post("/admin/console/sign-in", [("key", reader)]).status == 303)
                let lacking = try await other.get("/admin/console/clients")
                #expect(lacking.status == 403 && lacking.html.contains("clients:write"), "\(lacking.html)")
            }
        }
    }
}
