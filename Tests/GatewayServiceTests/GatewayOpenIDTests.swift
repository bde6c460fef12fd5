import AsyncHTTPClient
import Crypto
import Foundation
import GatewayService
import IdentityService
import JWTKit
import KontoContracts
import KontoModel
import KontoWire
import KontoWebAuthn
import NIOCore
import NIOHTTP1
import Testing

/// Konto as an OpenID Provider, at the gateway: what relying parties fetch.
@Suite("Gateway: the OpenID Provider's endpoints")
struct GatewayOpenIDTests {
    @Test("/oauth2/jwks: 404 while Konto is no OpenID Provider; then the JWK Set, every key's public half, cacheable")
    func jwks() async throws {
        try await GatewayHarness.withGateway { gateway in
            let off = try await gateway.request(.GET, "/oauth2/jwks")
            #expect(off.status == 404 && off.code == "request.notFound")
        }
        let signing = try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        let next = try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        var options = IdentityOptions()
        options.openID = try OpenIDProviderSettings(issuer: "http://localhost:8080", keys: OpenIDSigningKeys([signing, next]))
        try await GatewayHarness.withGateway(identityOptions: options) { gateway in
            let answer = try await gateway.request(.GET, "/oauth2/jwks")
            #expect(answer.status == 200)
            #expect(answer.contentType == "application/jwk-set+json")
            #expect(answer.headers.first(name: "Cache-Control") == "public, max-age=300")
            let keys = try #require(answer.object["keys"] as? [[String: Any]])
            #expect(keys.map { $0["kid"] as? String } == [signing.keyId, next.keyId])
            #expect(keys.allSatisfy { $0["kty"] as? String == "EC" && $0["crv"] as? String == "P-256" && $0["alg"] as? String == "ES256" && $0["use"] as? String == "sig" })
            #expect(keys.allSatisfy { $0["d"] == nil })
            #expect(keys.first?["x"] as? String == signing.publicKey.x)
        }
    }

    static let dashboardSecret = "dashboard secret: long & random"

    static func options() throws -> IdentityOptions {
        var options = IdentityOptions()
        options.openID = try OpenIDProviderSettings(
            issuer: "http://localhost:8080", keys: OpenIDSigningKeys([OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)]),
            clients: OpenIDClients([
                OpenIDClient(
                    id: "dashboard", name: "Dashboard", authentication: .secret(method: "client_secret_basic", digest: Array(SHA256.hash(data: Data(dashboardSecret.utf8)))),
                    redirectURIs: ["https://dashboard.example.org/callback"], scopes: ["openid", "email", "profile", "offline_access"], isFirstParty: true
                ),
            ])
        )
        return options
    }

    /// The client's Basic credentials: id and secret form-encoded, then base64 (RFC 6749 2.3.1).
    static func basic(_ id: String, _ secret: String) -> String {
        func encoded(_ text: String) -> String {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
        }
        return "Basic " + Data("\(encoded(id)):\(encoded(secret))".utf8).base64EncodedString()
    }

    static func form(_ gateway: GatewayHarness.Running, _ path: String, _ fields: [(String, String)], authorization: String? = basic("dashboard", dashboardSecret), contentType: String = "application/x-www-form-urlencoded") async throws -> GatewayHarness.HTTPAnswer {
        var request = HTTPClientRequest(url: gateway.baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = fields.map { "\($0.0.addingPercentEncoding(withAllowedCharacters: allowed)!)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await gateway.http.execute(request, timeout: .seconds(30))
        let collected = try await response.body.collect(upTo: 1 << 20)
        return GatewayHarness.HTTPAnswer(status: Int(response.status.code), headers: response.headers, body: Data(collected.readableBytesView))
    }

    /// A code for the session, as the console gets one from Identity; with its PKCE verifier.
    static func code(
        _ gateway: GatewayHarness.Running, session: String, scope: String = "openid email profile offline_access", client: String = "dashboard",
        redirect: String = "https://dashboard.example.org/callback"
    ) async throws -> (code: String, verifier: String) {
        let verifier = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        let challenge = Base64URL.encode(Array(SHA256.hash(data: Data(verifier.utf8))))
        let parameters = [
            ("response_type", "code"), ("client_id", client), ("redirect_uri", redirect), ("scope", scope),
            ("state", "s"), ("nonce", "n"), ("code_challenge", challenge), ("code_challenge_method", "S256"),
        ].map { IdentityOpenIDParameter($0.0, $0.1) }
        let answer = try await gateway.withService(port: gateway.identityPort, server: IdentityContract.serviceName) { identity in
            try await identity.call(IdentityContract.openIDAuthorize, IdentityOpenIDAuthorizeRequest(token: BearerToken(session), parameters: parameters, requestedAt: Timestamp(Date())))
        }
        let code = try #require(URLComponents(string: answer.location ?? "")?.queryItems?.first { $0.name == "code" }?.value, "\(answer)")
        return (code, verifier)
    }

    @Test("logging out everywhere signs every application out too: its access token reads userinfo no more, its refresh token refreshes no more; the consent stays")
    func logoutEverywhereEndsApplications() async throws {
        try await GatewayHarness.withGateway(identityOptions: try Self.options()) { gateway in
            let (session, _) = try await gateway.signUp("everywhere@stanford.edu")
            let (code, verifier) = try await Self.code(gateway, session: session)
            let tokens = try await Self.form(gateway, "/oauth2/token", [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://dashboard.example.org/callback"), ("code_verifier", verifier),
            ]).object
            let accessToken = try #require(tokens["access_token"] as? String), refreshToken = try #require(tokens["refresh_token"] as? String)
            #expect(try await gateway.request(.GET, "/oauth2/userinfo", token: accessToken).status == 200)
            // The ID token says how the person signed in (RFC 8176): a password chosen at sign-up.
            let idToken = try #require(tokens["id_token"] as? String)
            let payload = try #require(Base64URL.decodeIfValid(String(idToken.split(separator: ".")[1])))
            #expect((try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])?["amr"] as? [String] == ["pwd"], "\(String(decoding: payload, as: UTF8.self))")
            #expect(try await gateway.request(.DELETE, "/v1/sessions", token: session).status == 200)
            let userinfo = try await gateway.request(.GET, "/oauth2/userinfo", token: accessToken)
            #expect(userinfo.status == 401, "\(userinfo.text)")
            let refreshed = try await Self.form(gateway, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
            #expect(refreshed.status == 400 && refreshed.object["error"] as? String == "invalid_grant", "\(refreshed.text)")
            // Signed in again, the application is still listed (its consent), with no live sign-in.
            let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"everywhere@stanford.edu","password":"correct horse battery"}"#)
            let again = try #require((login.object["session"] as? [String: Any])?["token"] as? String, "\(login.text)")
            let applications = try await gateway.request(.GET, "/v1/account/applications", token: again)
            #expect(applications.status == 200, "\(applications.text)")
        }
    }

    @Test("a pairwise client's access token reads the account under the client's own subject: two sectors' answers share no identifier, and neither holds the public id")
    func pairwiseAccount() async throws {
        var options = try Self.options()
        let settings = try #require(options.openID)
        var clients = Array(settings.clients.clients.values)
        for sector in ["study", "crm"] {
            clients.append(OpenIDClient(
                id: sector, name: sector, authentication: .secret(method: "client_secret_basic", digest: Array(SHA256.hash(data: Data(Self.dashboardSecret.utf8)))),
                redirectURIs: ["https://\(sector).example.org/callback"], scopes: ["openid", "email", "profile"], isFirstParty: true,
                sectorIdentifier: "\(sector).example.org"
            ))
        }
        options.openID = try OpenIDProviderSettings(issuer: settings.issuer, keys: settings.keys, clients: OpenIDClients(clients))
        try await GatewayHarness.withGateway(identityOptions: options) { gateway in
            let (session, accountId) = try await gateway.signUp("jane@stanford.edu")
            var answers: [String: GatewayHarness.HTTPAnswer] = [:]
            var subjects: [String: String] = [:]
            for sector in ["study", "crm"] {
                let redirect = "https://\(sector).example.org/callback"
                let (code, verifier) = try await Self.code(gateway, session: session, scope: "openid email profile", client: sector, redirect: redirect)
                let tokens = try await Self.form(gateway, "/oauth2/token", [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect), ("code_verifier", verifier),
                ], authorization: Self.basic(sector, Self.dashboardSecret)).object
                let accessToken = try #require(tokens["access_token"] as? String)
                let userinfo = try await gateway.request(.GET, "/oauth2/userinfo", token: accessToken)
                subjects[sector] = try #require(userinfo.object["sub"] as? String)
                answers[sector] = try await gateway.request(.GET, "/v1/account", token: accessToken)
            }
            let study = try #require(answers["study"]), crm = try #require(answers["crm"])
            #expect(study.status == 200 && crm.status == 200, "\(study.text) \(crm.text)")
            // Each names the account as its client knows it; the two differ, and the public id is in neither.
            #expect(study.object["accountId"] as? String == subjects["study"] && crm.object["accountId"] as? String == subjects["crm"])
            #expect(subjects["study"] != subjects["crm"] && subjects.values.allSatisfy { $0 != accountId })
            for answer in [study, crm] {
                #expect(!answer.text.contains(accountId), "\(answer.text)")
                #expect((answer.object["details"] as? [String: Any])?["accountId"] as? String == answer.object["accountId"] as? String)
                #expect((answer.object["details"] as? [String: Any])?["createdAt"] == nil)
            }
            let (studySubject, crmSubject) = (try #require(subjects["study"]), try #require(subjects["crm"]))
            #expect(!study.text.contains(crmSubject) && !crm.text.contains(studySubject))
        }
    }

    @Test("Konto's API with an application's access token: GET /v1/account with profile and email; fewer scopes, any other route: 403 insufficient_scope; a forged or revoked token: 401")
    func accessTokensAtTheAPI() async throws {
        try await GatewayHarness.withGateway(identityOptions: try Self.options()) { gateway in
            let (session, accountId) = try await gateway.signUp("leland@stanford.edu")
            func tokens(scope: String) async throws -> [String: Any] {
                let (code, verifier) = try await Self.code(gateway, session: session, scope: scope)
                return try await Self.form(gateway, "/oauth2/token", [
                    ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://dashboard.example.org/callback"), ("code_verifier", verifier),
                ]).object
            }
            let full = try await tokens(scope: "openid email profile offline_access")
            let accessToken = try #require(full["access_token"] as? String)
            let account = try await gateway.request(.GET, "/v1/account", token: accessToken)
            let details = account.object["details"] as? [String: Any]
            #expect(account.status == 200 && account.object["accountId"] as? String == accountId && details?["userId"] as? String == "leland@stanford.edu")
            #expect((details?["name"] as? [String: Any])?["givenName"] as? String == "Leland")
            #expect(account.headers.first(name: "ETag") != nil)

            // Within its scopes only: fewer scopes, or any other route (a write, the sessions, the export, deletion).
            let narrow = try #require(try await tokens(scope: "openid email")["access_token"] as? String)
            let refused = try await gateway.request(.GET, "/v1/account", token: narrow)
            #expect(refused.status == 403 && refused.code == "request.insufficientScope")
            #expect(refused.headers.first(name: "WWW-Authenticate") == #"Bearer error="insufficient_scope", scope="email profile""#)
            for (method, path, json) in [
                (HTTPMethod.PATCH, "/v1/account", #"{"set": {"name": {"givenName": "Mallory"}}}"#), (.GET, "/v1/account/sessions", nil),
                (.GET, "/v1/account/export", nil), (.DELETE, "/v1/account", nil), (.GET, "/v1/account/applications", nil),
            ] {
                let answer = try await gateway.request(method, path, json: json, token: accessToken)
                #expect(answer.status == 403 && answer.code == "request.insufficientScope", "\(method) \(path): \(answer.status)")
            }
            #expect(try await gateway.request(.GET, "/v1/account", token: session).object["details"] != nil, "the owner's session reads it as before")

            // A token Konto did not sign, and one whose grant ended: 401, as for a bad session.
            let parts = accessToken.split(separator: ".")
            let forged = "\(parts[0]).\(parts[1]).\(Base64URL.encode((0..<64).map { _ in UInt8.random(in: 0...255) }))"
            let bad = try await gateway.request(.GET, "/v1/account", token: forged)
            #expect(bad.status == 401 && bad.code == "account.unauthenticated" && bad.headers.first(name: "WWW-Authenticate") == #"Bearer error="invalid_token""#)
            #expect(try await gateway.request(.GET, "/v1/account/sessions", token: forged).status == 401)
            let revoked = try await Self.form(gateway, "/oauth2/revoke", [("token", try #require(full["refresh_token"] as? String))])
            #expect(revoked.status == 200)
            #expect(try await gateway.request(.GET, "/v1/account", token: accessToken).status == 401)
        }
    }

    @Test("discovery: 404 while Konto is no OpenID Provider; then where every endpoint is and only what OAuth 2.1 leaves (code, S256, no request objects)")
    func discovery() async throws {
        try await GatewayHarness.withGateway { gateway in
            let discovery = try await gateway.request(.GET, "/.well-known/openid-configuration")
            let userInfo = try await gateway.request(.GET, "/oauth2/userinfo", token: "some-token")
            #expect(discovery.status == 404 && userInfo.status == 404)
        }
        try await GatewayHarness.withGateway(identityOptions: try Self.options()) { gateway in
            let answer = try await gateway.request(.GET, "/.well-known/openid-configuration")
            #expect(answer.status == 200 && answer.contentType == "application/json")
            let document = answer.object
            #expect(document["issuer"] as? String == "http://localhost:8080")
            #expect(document["token_endpoint"] as? String == "http://localhost:8080/oauth2/token")
            #expect(document["jwks_uri"] as? String == "http://localhost:8080/oauth2/jwks")
            #expect(document["authorization_endpoint"] as? String == "http://localhost:8080/oauth2/authorize")
            #expect(document["response_types_supported"] as? [String] == ["code"])
            #expect(document["code_challenge_methods_supported"] as? [String] == ["S256"])
            #expect(document["id_token_signing_alg_values_supported"] as? [String] == ["ES256"])
            #expect(document["grant_types_supported"] as? [String] == ["authorization_code", "refresh_token"])
            #expect(document["request_parameter_supported"] as? Bool == false && document["authorization_response_iss_parameter_supported"] as? Bool == true)
        }
    }

    @Test("token, userinfo, introspection, refresh and revocation over HTTP: OAuth's member names, no-store, the profile's claims by scope")
    func tokens() async throws {
        try await GatewayHarness.withGateway(identityOptions: try Self.options()) { gateway in
            let (session, accountId) = try await gateway.signUp("leland@stanford.edu")
            let (code, verifier) = try await Self.code(gateway, session: session)
            let answer = try await Self.form(gateway, "/oauth2/token", [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", "https://dashboard.example.org/callback"), ("code_verifier", verifier),
            ])
            #expect(answer.status == 200 && answer.headers.first(name: "Cache-Control") == "no-store" && answer.headers.first(name: "Pragma") == "no-cache")
            let tokens = answer.object
            #expect(tokens["token_type"] as? String == "Bearer" && tokens["scope"] as? String == "email offline_access openid profile")
            let accessToken = try #require(tokens["access_token"] as? String)
            let refreshToken = try #require(tokens["refresh_token"] as? String)
            #expect(tokens["id_token"] is String && tokens["expires_in"] as? Int == 300)

            // Userinfo: the claims of the scopes, from Identity and Profile.
            let info = try await gateway.request(.GET, "/oauth2/userinfo", token: accessToken)
            #expect(info.status == 200)
            #expect(info.object["sub"] as? String == accountId && info.object["email"] as? String == "leland@stanford.edu" && info.object["email_verified"] as? Bool == false)
            #expect(info.object["given_name"] as? String == "Leland" && info.object["family_name"] as? String == "Stanford" && info.object["name"] as? String == "Leland Stanford")
            let posted = try await gateway.request(.POST, "/oauth2/userinfo", token: accessToken)
            #expect(posted.status == 200 && posted.object["sub"] as? String == accountId)
            let refused = try await gateway.request(.GET, "/oauth2/userinfo", token: "not-a-token")
            #expect(refused.status == 401 && refused.headers.first(name: "WWW-Authenticate")?.contains("error=\"invalid_token\"") == true)
            let bare = try await gateway.request(.GET, "/oauth2/userinfo")
            #expect(bare.status == 401 && bare.headers.first(name: "WWW-Authenticate") == "Bearer realm=\"konto\"")

            // Introspection.
            let active = try await Self.form(gateway, "/oauth2/introspect", [("token", accessToken)])
            #expect(active.status == 200 && active.object["active"] as? Bool == true && active.object["client_id"] as? String == "dashboard")
            #expect(active.object["sub"] as? String == accountId && active.object["exp"] is Int && active.object["iss"] as? String == "http://localhost:8080")

            // Refresh, then the rotated-out token again: the family ends.
            let refreshed = try await Self.form(gateway, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
            #expect(refreshed.status == 200)
            let next = try #require(refreshed.object["refresh_token"] as? String)
            let reused = try await Self.form(gateway, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
            #expect(reused.status == 400 && reused.object["error"] as? String == "invalid_grant")
            #expect(try await Self.form(gateway, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", next)]).object["error"] as? String == "invalid_grant")
            #expect(try await gateway.request(.GET, "/oauth2/userinfo", token: accessToken).status == 401)

            // Revocation: 200 for a token of its own, and for one never seen.
            let second = try await Self.code(gateway, session: session)
            let more = try await Self.form(gateway, "/oauth2/token", [
                ("grant_type", "authorization_code"), ("code", second.code), ("redirect_uri", "https://dashboard.example.org/callback"), ("code_verifier", second.verifier),
            ])
            let moreAccess = try #require(more.object["access_token"] as? String)
            #expect(try await Self.form(gateway, "/oauth2/revoke", [("token", "never-issued")]).status == 200)
            #expect(try await gateway.request(.GET, "/oauth2/userinfo", token: moreAccess).status == 200)
            #expect(try await Self.form(gateway, "/oauth2/revoke", [("token", moreAccess), ("token_type_hint", "access_token")]).status == 200)
            #expect(try await gateway.request(.GET, "/oauth2/userinfo", token: moreAccess).status == 401)
            #expect(try await Self.form(gateway, "/oauth2/introspect", [("token", moreAccess)]).object["active"] as? Bool == false)
        }
    }

    @Test("the token endpoint's refusals: form bodies only, a parameter once, client authentication by Basic (401 with its scheme), failures throttled per address")
    func tokenRefusals() async throws {
        try await GatewayHarness.withGateway(configure: { $0.credentialsRateLimitPerMinute = 5 }, identityOptions: try Self.options()) { gateway in
            let json = try await Self.form(gateway, "/oauth2/token", [("grant_type", "refresh_token")], contentType: "application/json")
            #expect(json.status == 400 && json.object["error"] as? String == "invalid_request")
            let twice = try await Self.form(gateway, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", "a"), ("refresh_token", "b")])
            #expect(twice.status == 400 && twice.object["error"] as? String == "invalid_request" && (twice.object["error_description"] as? String)?.contains("refresh_token") == true)
            let unsupported = try await Self.form(gateway, "/oauth2/token", [("grant_type", "password"), ("username", "a"), ("password", "b")])
            #expect(unsupported.status == 400 && unsupported.object["error"] as? String == "unsupported_grant_type")
            // Successes are not counted: more than the limit of them.
            for _ in 0..<7 {
                #expect(try await Self.form(gateway, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", "unknown")]).object["error"] as? String == "invalid_grant")
            }
            // Failed client authentications are: five, then 429.
            for attempt in 0..<5 {
                let wrong = try await Self.form(gateway, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", "x")], authorization: Self.basic("dashboard", "guess \(attempt)"))
                #expect(wrong.status == 401 && wrong.object["error"] as? String == "invalid_client" && wrong.headers.first(name: "WWW-Authenticate") == "Basic realm=\"konto\"")
            }
            let throttled = try await Self.form(gateway, "/oauth2/token", [("grant_type", "refresh_token"), ("refresh_token", "x")])
            #expect(throttled.status == 429 && throttled.headers.first(name: "Retry-After") != nil, "even the right secret waits")
            let malformed = try await Self.form(gateway, "/oauth2/introspect", [("token", "x")], authorization: "Basic !!!")
            #expect(malformed.status == 429)
        }
    }
}
