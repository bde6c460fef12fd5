import Foundation
import GatewayService
import IdentityService
import KontoContracts
import KontoTesting
import NIOHTTP1
import Testing

/// The admin console's OpenID Provider clients over HTTP, through a running gateway and the real services: the file's
/// shown read-only, one registered with its secret shown once, a refused registration storing nothing, a change, a new
/// secret, a removal; each checked at the admin API and, for the secrets, at the token endpoint.
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

    /// A textarea's text as the page shows it, its HTML escapes undone (what a browser would post back).
    static func textarea(_ page: ConsoleBrowser.Page, _ id: String) -> String? {
        guard let match = page.html.firstMatch(of: try! Regex<(Substring, Substring)>(#"<textarea id="\#(id)"[^>]*>([^<]*)</textarea>"#)) else { return nil }
        return String(match.output.1).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }

    @Test("a client changed: the form filled with its settings, type fixed; a bad redirect URI refused with the input kept, nothing stored; saved, the list shows it, its secret kept; a private_key_jwt client's keys given back; the file's has no change and is refused one; forms need the CSRF token")
    func changes() async throws {
        try await GatewayHarness.withGateway(configure: { $0.adminPort = 0 }, identityOptions: try Self.options()) { gateway in
            let root = GatewayAdminTests.bootstrap.text
            let adminURL = try #require(gateway.adminURL)
            var admin = gateway
            admin.baseURL = adminURL
            func stored(_ id: String) async throws -> [String: Any]? {
                let listed = try await admin.request(.GET, "/admin/v1/oidc/clients", token: root)
                return (listed.object["clients"] as? [[String: Any]])?.first { $0["id"] as? String == id }
            }
            try await ConsoleBrowser.withClient { http in
                var browser = ConsoleBrowser(baseURL: adminURL, http: http)
                _ = try await browser.get("/admin/console")
                #expect(try await browser.post("/admin/console/sign-in", [("key", root)]).status == 303)
                let added = try await browser.post("/admin/console/clients/add", Self.crm)
                let secret = try #require(Self.madeSecret(added), "\(added.html)")
                let registered = try #require(try await stored("crm"))

                // The list offers a change for the API's clients, none for the file's.
                let list = try await browser.get("/admin/console/clients")
                #expect(list.html.contains(#"href="/admin/console/clients/edit?client=crm""#), "\(list.html)")
                #expect(!list.html.contains("/clients/edit?client=study-app"))

                // The form filled with its settings: id read-only, its type alone, a secret client's methods, no keys, no list.
                let edit = try await browser.get("/admin/console/clients/edit?client=crm")
                #expect(edit.status == 200 && edit.html.contains("<h1>Change the client crm</h1>"), "\(edit.html)")
                #expect(edit.html.contains(#"action="/admin/console/clients/update""#) && !edit.html.contains(#"action="/admin/console/clients/add""#))
                #expect(edit.html.contains(#"name="id" maxlength="128" value="crm" required readonly>"#) && edit.html.contains(#"name="name" maxlength="64" value="CRM" required>"#))
                #expect(edit.html.contains(#"<option value="confidential" selected>"#) && !edit.html.contains(#"<option value="public""#))
                #expect(edit.html.contains(#"<option value="client_secret_basic" selected>"#) && edit.html.contains(#"<option value="client_secret_post">"#))
                #expect(!edit.html.contains(#"<option value="private_key_jwt""#) && !edit.html.contains(#"id="client-jwks""#))
                #expect(Self.textarea(edit, "client-redirect-uris") == "https://crm.example.org/callback\nhttps://crm.example.org/other")
                #expect(Self.textarea(edit, "client-post-logout-uris") == "https://crm.example.org/bye")
                #expect(edit.html.contains(#"value="email" checked>"#) && edit.html.contains(#"value="openid" checked>"#) && !edit.html.contains(#"value="profile" checked>"#))
                #expect(!edit.html.contains(#"id="clients""#) && !edit.html.contains(#"id="add-client""#) && edit.html.contains(#"id="update-client""#))
                // The file's client and an unknown one have no form.
                let fileEdit = try await browser.get("/admin/console/clients/edit?client=study-app")
                #expect(fileEdit.status == 409 && fileEdit.html.contains("change it there") && !fileEdit.html.contains(#"id="update-client""#), "\(fileEdit.html)")
                let unknownEdit = try await browser.get("/admin/console/clients/edit?client=nobody")
                #expect(unknownEdit.status == 404 && unknownEdit.html.contains("No OpenID Provider client has the id"), "\(unknownEdit.html)")

                var changed = Self.crm.filter { !["name", "authentication", "redirectUris"].contains($0.0) }
                changed += [("name", "CRM 2"), ("authentication", "client_secret_post"), ("redirectUris", "https://crm.example.org/v2\r\n")]

                // Without the form's token, or from another site, nothing changes.
                _ = try await browser.get("/admin/console/clients/edit?client=crm")
                #expect(try await browser.post("/admin/console/clients/update", changed, csrf: .some(nil)).status == 403)
                browser.extraHeaders = [("Sec-Fetch-Site", "cross-site")]
                #expect(try await browser.post("/admin/console/clients/update", changed).status == 403)
                browser.extraHeaders = []
                #expect(try await stored("crm")?["redirectUris"] as? [String] == ["https://crm.example.org/callback", "https://crm.example.org/other"])

                // A redirect URI that is no https URL: the API's reason, the change form kept with what was given, nothing stored.
                var bad = changed.filter { $0.0 != "redirectUris" }
                bad += [("redirectUris", "https://crm.example.org/v2\r\nftp://files.example.org/callback")]
                let refused = try await browser.post("/admin/console/clients/update", bad)
                #expect(refused.status == 422 && refused.html.contains(#"id="form-error""#) && refused.html.contains("redirectUris: &quot;ftp://files.example.org/callback&quot;"), "\(refused.html)")
                #expect(Self.textarea(refused, "client-redirect-uris") == "https://crm.example.org/v2\nftp://files.example.org/callback")
                #expect(refused.html.contains(#"value="CRM 2" required>"#) && refused.html.contains(#"<option value="client_secret_post" selected>"#))
                #expect(refused.html.contains(#"value="crm" required readonly>"#) && refused.html.contains(#"action="/admin/console/clients/update""#))
                let unchanged = try #require(try await stored("crm"))
                #expect(unchanged["name"] as? String == "CRM" && unchanged["redirectUris"] as? [String] == ["https://crm.example.org/callback", "https://crm.example.org/other"])
                #expect(unchanged["updatedAt"] as? String == registered["updatedAt"] as? String)

                // Saved: the list shows the new redirect URI and method; the secret is the one made at registration.
                let saved = try await browser.post("/admin/console/clients/update", changed)
                #expect(saved.status == 200 && saved.html.contains("Changed crm."), "\(saved.html)")
                #expect(saved.html.contains(#"<tr data-client="crm"><td>crm</td><td>CRM 2</td><td>confidential · client_secret_post</td><td>this API</td>"#), "\(saved.html)")
                #expect(saved.html.contains("<td>https://crm.example.org/v2<br>after sign-out") && !saved.html.contains("https://crm.example.org/other"))
                #expect(Self.madeSecret(saved) == nil && saved.html.contains(#"id="add-client""#))
                let after = try #require(try await stored("crm"))
                #expect(after["redirectUris"] as? [String] == ["https://crm.example.org/v2"] && after["authentication"] as? String == "client_secret_post")
                #expect(after["secretCreatedAt"] as? String == registered["secretCreatedAt"] as? String && !secret.isEmpty)

                // A change of kind (a secret client made public) is the API's refusal, on the form.
                let kind = try await browser.post("/admin/console/clients/update", changed.filter { $0.0 != "type" } + [("type", "public")])
                #expect(kind.status == 422 && kind.html.contains("stay as registered"), "\(kind.html)")

                // A private_key_jwt client's form holds its keys: posted back as shown, they are kept.
                let jwkSet = KontoAdminClientsTests.publicKey(kid: "signer-key").jwkSet
                var signer = Self.crm.filter { !["id", "authentication", "jwks"].contains($0.0) }
                signer += [("id", "signer"), ("authentication", "private_key_jwt"), ("jwks", jwkSet)]
                #expect(try await browser.post("/admin/console/clients/add", signer).status == 200)
                let signerEdit = try await browser.get("/admin/console/clients/edit?client=signer")
                #expect(signerEdit.html.contains(#"<option value="private_key_jwt" selected>"#) && !signerEdit.html.contains(#"<option value="client_secret_basic""#), "\(signerEdit.html)")
                let shownKeys = try #require(Self.textarea(signerEdit, "client-jwks"), "\(signerEdit.html)")
                #expect(shownKeys.contains(#""kid":"signer-key""#))
                let resaved = try await browser.post("/admin/console/clients/update", signer.filter { !["name", "jwks"].contains($0.0) } + [("name", "Signer"), ("jwks", shownKeys)])
                #expect(resaved.status == 200 && resaved.html.contains("<td>confidential · private_key_jwt (keys signer-key)</td>"), "\(resaved.html)")
                #expect(try await stored("signer")?["name"] as? String == "Signer")

                // A public client's form has no authentication to choose.
                var spa = Self.crm.filter { !["id", "type", "authentication"].contains($0.0) }
                spa += [("id", "spa"), ("type", "public")]
                #expect(try await browser.post("/admin/console/clients/add", spa).status == 200)
                let spaEdit = try await browser.get("/admin/console/clients/edit?client=spa")
                #expect(spaEdit.html.contains(#"<option value="public" selected>"#) && !spaEdit.html.contains(#"id="client-authentication""#), "\(spaEdit.html)")

                // The file's client: its update refused (409), on the list, the file's settings kept.
                var fileChange = changed.filter { !["id", "type", "authentication"].contains($0.0) }
                fileChange += [("id", "study-app"), ("type", "public")]
                let inFile = try await browser.post("/admin/console/clients/update", fileChange)
                #expect(inFile.status == 409 && inFile.html.contains("change it there") && inFile.html.contains(#"id="clients""#), "\(inFile.html)")
                #expect(try await stored("study-app")?["name"] as? String == "Study App")
                let unknown = try await browser.post("/admin/console/clients/update", changed.filter { $0.0 != "id" } + [("id", "nobody")])
                #expect(unknown.status == 404 && unknown.html.contains("No OpenID Provider client has the id"), "\(unknown.html)")
            }
        }
    }

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
