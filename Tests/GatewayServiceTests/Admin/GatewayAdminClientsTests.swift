import Foundation
@testable import GatewayService
import IdentityService
import KontoContracts
import KontoTestSupport
import NIOHTTP1
import Testing

/// OpenID Provider clients registered through the admin API (docs/OIDC.md, "Clients through the admin API"), over the
/// real services: a client registered is served by the OAuth endpoints at once with the secret answered once; changed,
/// rotated and removed (its tokens stop working); the file's read-only; clients:write needed.
@Suite("Gateway admin API: OpenID Provider clients", .timeLimit(.minutes(4)))
struct GatewayAdminClientsTests {
    static func options() throws -> IdentityOptions {
        var options = try GatewayOpenIDTests.options()
        options.bootstrapOperatorKey = GatewayAdminTests.bootstrap
        return options
    }

    static let crm = #"{"id":"crm","name":"CRM","type":"confidential","authentication":"client_secret_basic","redirectUris":["https://crm.example.org/cb"],"scopes":["openid","email","profile","offline_access"],"firstParty":true}"#

    @Test("registered, used at the token endpoint, listed without its secret, changed, rotated, removed with its tokens; refusals")
    func lifecycle() async throws {
        try await GatewayHarness.withGateway(configure: { $0.adminPort = 0 }, identityOptions: try Self.options()) { running in
            var admin = running
            admin.baseURL = try #require(running.adminURL)
            let root = GatewayAdminTests.bootstrap.text

            let created = try await admin.request(.POST, "/admin/v1/oidc/clients", json: Self.crm, token: root)
            #expect(created.status == 201, "\(created.text)")
            let secret = try #require(created.object["secret"] as? String)
            let client = try #require(created.object["client"] as? [String: Any])
            #expect(client["source"] as? String == "api" && client["scopes"] as? [String] == ["email", "offline_access", "openid", "profile"] && client["secretCreatedAt"] is String)
            let listed = try await admin.request(.GET, "/admin/v1/oidc/clients", token: root)
            #expect(listed.status == 200 && !listed.text.contains(secret), "\(listed.text)")
            let clients = try #require(listed.object["clients"] as? [[String: Any]])
            #expect(clients.compactMap { $0["id"] as? String } == ["dashboard", "crm"] && clients.first?["source"] as? String == "file")

            // Served at once: the code exchange with the secret answered, introspection, Konto's own API.
            let (session, _) = try await running.signUp("ada@example.org")
            let first = try await GatewayOpenIDTests.code(running, session: session, scope: "openid email profile offline_access", client: "crm", redirect: "https://crm.example.org/cb")
            let basic = GatewayOpenIDTests.basic("crm", secret)
            let exchanged = try await GatewayOpenIDTests.form(running, "/oauth2/token", [
                ("grant_type", "authorization_code"), ("code", first.code), ("redirect_uri", "https://crm.example.org/cb"), ("code_verifier", first.verifier),
            ], authorization: basic)
            #expect(exchanged.status == 200, "\(exchanged.text)")
            let accessToken = try #require(exchanged.object["access_token"] as? String)
            let refreshToken = try #require(exchanged.object["refresh_token"] as? String)
            #expect(try await GatewayOpenIDTests.form(running, "/oauth2/introspect", [("token", accessToken)], authorization: basic).object["active"] as? Bool == true)
            #expect(try await GatewayOpenIDTests.form(running, "/oauth2/introspect", [("token", accessToken)], authorization: GatewayOpenIDTests.basic("crm", secret + "x")).status == 401)

            // Changed: the redirect URI; the id in the body must be the path's; the file's stay.
            let changed = Self.crm.replacingOccurrences(of: "https://crm.example.org/cb", with: "https://crm.example.org/callback")
            let put = try await admin.request(.PUT, "/admin/v1/oidc/clients/crm", json: changed, token: root)
            #expect(put.status == 200 && put.object["redirectUris"] as? [String] == ["https://crm.example.org/callback"], "\(put.text)")
            #expect(try await admin.request(.PUT, "/admin/v1/oidc/clients/other", json: changed, token: root).status == 400)
            #expect(try await admin.request(.PUT, "/admin/v1/oidc/clients/dashboard", json: changed.replacingOccurrences(of: #""id":"crm","#, with: ""), token: root).code == "admin.clientInFile")

            // Rotated with an hour's overlap: both secrets work; the new one is not listed.
            let rotated = try await admin.request(.POST, "/admin/v1/oidc/clients/crm/secret", json: #"{"keepPreviousSeconds":3600}"#, token: root)
            #expect(rotated.status == 200, "\(rotated.text)")
            let next = try #require(rotated.object["secret"] as? String)
            #expect(next != secret && (rotated.object["client"] as? [String: Any])?["previousSecretExpiresAt"] is String)
            for given in [secret, next] {
                #expect(try await GatewayOpenIDTests.form(running, "/oauth2/introspect", [("token", accessToken)], authorization: GatewayOpenIDTests.basic("crm", given)).status == 200)
            }
            #expect(try await admin.request(.POST, "/admin/v1/oidc/clients/crm/secret", token: root).status == 200, "no body: no overlap")
            #expect(try await GatewayOpenIDTests.form(running, "/oauth2/introspect", [("token", accessToken)], authorization: GatewayOpenIDTests.basic("crm", next)).status == 401)

            // Refusals: invalid settings, a taken id, an unknown client, a key without clients:write, no key.
            let invalid = try await admin.request(.POST, "/admin/v1/oidc/clients", json: Self.crm.replacingOccurrences(of: "https://crm", with: "http://crm").replacingOccurrences(of: #""id":"crm""#, with: #""id":"crm-2""#), token: root)
            #expect(invalid.status == 422 && invalid.code == "admin.invalidRequest" && invalid.text.contains("redirectUris"), "\(invalid.text)")
            #expect(try await admin.request(.POST, "/admin/v1/oidc/clients", json: Self.crm, token: root).code == "admin.clientExists")
            // A key with clients:write alone registers no first-party client (no consent page): that is clients:firstParty's.
            let writer = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"clients","scopes":["clients:write"]}"#, token: root)
            let writerKey = try #require(writer.object["secret"] as? String)
            let harvest = Self.crm.replacingOccurrences(of: #""id":"crm""#, with: #""id":"harvest""#).replacingOccurrences(of: "https://crm.example.org/cb", with: "https://evil.example.net/cb")
            let trusted = try await admin.request(.POST, "/admin/v1/oidc/clients", json: harvest, token: writerKey)
            #expect(trusted.status == 403 && trusted.code == "admin.scopeMissing" && trusted.text.contains("clients:firstParty"), "\(trusted.text)")
            #expect(try await admin.request(.POST, "/admin/v1/oidc/clients", json: harvest.replacingOccurrences(of: #""firstParty":true"#, with: #""firstParty":false"#), token: writerKey).status == 201)
            // A misspelt field (here the pairwise sector) is refused by name, not dropped: nothing is registered.
            let typo = try await admin.request(
                .POST, "/admin/v1/oidc/clients", json: Self.crm.replacingOccurrences(of: #""id":"crm""#, with: #""id":"crm-typo","sectorIdentifer":"crm.example.org""#), token: root
            )
            #expect(typo.status == 400 && typo.code == "request.malformed" && typo.text.contains("sectorIdentifer"), "\(typo.text)")
            #expect(try await !admin.request(.GET, "/admin/v1/oidc/clients", token: root).text.contains("crm-typo"))
            #expect(try await admin.request(.POST, "/admin/v1/oidc/clients", json: Self.crm.replacingOccurrences(of: #""id":"crm","#, with: ""), token: root).status == 400)
            #expect(try await admin.request(.DELETE, "/admin/v1/oidc/clients/nobody", token: root).code == "admin.clientNotFound")
            #expect(try await admin.request(.DELETE, "/admin/v1/oidc/clients/dashboard", token: root).code == "admin.clientInFile")
            let reader = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"reader","scopes":["accounts:read"]}"#, token: root)
            let readerKey = try #require(reader.object["secret"] as? String)
            #expect(try await admin.request(.GET, "/admin/v1/oidc/clients", token: readerKey).code == "admin.scopeMissing")
            #expect(try await admin.request(.DELETE, "/admin/v1/oidc/clients/crm", token: readerKey).status == 403)
            #expect(try await admin.request(.GET, "/admin/v1/oidc/clients").status == 401)
            #expect(try await running.request(.GET, "/admin/v1/oidc/clients", token: root).status == 404, "the public listener serves none of it")

            // Removed: its grant ends (the access token at Konto's API, the refresh token), it is no client any more.
            #expect(try await running.request(.GET, "/v1/account", token: accessToken).status == 200)
            let removed = try await admin.request(.DELETE, "/admin/v1/oidc/clients/crm", token: root)
            #expect(removed.status == 200 && removed.object["grantsEnded"] as? Int == 1 && removed.object["consentsRemoved"] as? Int == 0, "\(removed.text)")
            #expect(try await running.request(.GET, "/v1/account", token: accessToken).status == 401)
            let refresh = try await GatewayOpenIDTests.form(running, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], authorization: basic)
            #expect(refresh.status == 401 && refresh.object["error"] as? String == "invalid_client")
            let audit = try await admin.request(.GET, "/admin/v1/audit?type=admin.removeOpenIDClient", token: root)
            #expect(audit.status == 200 && audit.text.contains("crm"), "\(audit.text)")
        }
    }
}
