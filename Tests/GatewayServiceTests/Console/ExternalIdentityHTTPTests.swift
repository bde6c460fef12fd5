import AsyncHTTPClient
import Crypto
import Foundation
import GatewayService
import IdentityService
import KontoModel
import KontoTestSupport
import NIOCore
import NIOHTTP1
import Testing

/// Sign-in with external identity providers over HTTP, through a running gateway and the real services, against real
/// providers as processes of their own: PyPI's oidc-provider-mock (no one here wrote it) and the Apple stand-in that
/// follows Sign in with Apple's documented endpoints (checking the ES256 client secrets Konto signs).
@Suite("External identity providers over HTTP", .serialized)
struct ExternalIdentityHTTPTests {
    static let options: IdentityOptions = {
        var options = IdentityOptions()
        // Each unknown key id may fetch the keys at once: the rotation test must not wait out a cooldown.
        options.providerKeyRefreshCooldown = .zero
        options.revocationInterval = .milliseconds(100)
        options.revocationBackoff = .milliseconds(100)
        return options
    }()

    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    static func hashed(_ nonce: String) -> String {
        SHA256.hash(data: Array(nonce.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// An ID token minted by the generic provider's own endpoints for `sub` (client `konto-web`).
    static func idToken(_ provider: OIDCProviderProcess, sub: String, nonce: String, claims: [String: Any] = [:]) async throws -> String {
        var body: [String: Any] = ["sub": sub, "aud": "konto-web", "nonce": nonce]
        body.merge(claims) { $1 }
        return try #require(try await provider.control("/_control/id-token", body)["id_token"] as? String)
    }

    static func sessionToken(_ answer: GatewayHarness.HTTPAnswer) -> String? {
        (answer.object["session"] as? [String: Any])?["token"] as? String
    }

    @Test("a real provider: discovery, native sign-in (a new account, then the same one), replay refused, key rotation, linking and unlinking, no takeover by an unverified address, the web flow's code")
    func genericProvider() async throws {
        let provider = try await OIDCProviderProcess.startGeneric()
        do {
            try await provider.control("/_control/clients", [
                "client_id": "konto-web", "client_secret": "s3cret", "token_endpoint_auth_method": "client_secret_post",
                "redirect_uris": ["http://localhost:8080/account/oidc/generic/callback"],
            ])
            let providers = IdentityProviders([
                IdentityProvider(name: "generic", displayName: "Generic ID", issuer: provider.issuer, clientId: "konto-web", authentication: .secret(SecretString("s3cret"))),
            ])
            try await GatewayHarness.withGateway(identityOptions: Self.options, providers: providers) { gateway in
                let listed = try await gateway.request(.GET, "/v1/identity-providers")
                #expect(listed.status == 200 && listed.text.contains(#""displayName":"Generic ID""#), "\(listed.text)")

                // Native: the provider's own token, verified against its published key; a new account.
                let claims: [String: Any] = ["email": "ada@example.org", "email_verified": true, "given_name": "Ada", "family_name": "Lovelace"]
                let token = try await Self.idToken(provider, sub: "ada", nonce: "nonce-ada-0000000001", claims: claims)
                let body = Self.json(["provider": "generic", "idToken": token, "nonce": "nonce-ada-0000000001"])
                let created = try await gateway.request(.POST, "/v1/sessions/oidc", json: body)
                #expect(created.status == 201, "\(created.text)")
                let accountId = try #require(created.object["accountId"] as? String)
                let details = try #require(created.object["details"] as? [String: Any])
                #expect(details["userId"] as? String == "ada@example.org" && details["emailVerified"] as? Bool == true)
                #expect((details["name"] as? [String: Any])?["familyName"] as? String == "Lovelace")
                // The same token again: refused (its nonce was used).
                let replay = try await gateway.request(.POST, "/v1/sessions/oidc", json: body)
                #expect(replay.status == 401 && replay.code == "account.invalidIdentityToken", "\(replay.text)")
                // A wrong nonce, a token from elsewhere: refused with the reason.
                let other = try await Self.idToken(provider, sub: "ada", nonce: "nonce-ada-0000000002", claims: claims)
                let wrongNonce = try await gateway.request(.POST, "/v1/sessions/oidc", json: Self.json(["provider": "generic", "idToken": other, "nonce": "nonce-someone-else"]))
                #expect(wrongNonce.status == 401 && wrongNonce.text.contains("nonce does not match"), "\(wrongNonce.text)")
                let again = try await gateway.request(.POST, "/v1/sessions/oidc", json: Self.json(["provider": "generic", "idToken": other, "nonce": "nonce-ada-0000000002"]))
                #expect(again.status == 200 && again.object["accountId"] as? String == accountId, "\(again.text)")

                // The provider rotates its key: the next token names a new kid, fetched then.
                try await provider.control("/_control/rotate")
                let rotated = try await Self.idToken(provider, sub: "ada", nonce: "nonce-ada-0000000003", claims: claims)
                let afterRotation = try await gateway.request(.POST, "/v1/sessions/oidc", json: Self.json(["provider": "generic", "idToken": rotated, "nonce": "nonce-ada-0000000003"]))
                #expect(afterRotation.status == 200 && afterRotation.object["accountId"] as? String == accountId, "\(afterRotation.text)")

                // Linking: the owner of a password account links an identity, signs in with it, unlinks it.
                let (ownerToken, ownerId) = try await gateway.signUp("grace@example.org")
                let linkToken = try await Self.idToken(provider, sub: "grace-at-provider", nonce: "nonce-grace-0000001", claims: ["email": "grace@provider.example", "email_verified": true])
                let linked = try await gateway.request(.POST, "/v1/account/identities", json: Self.json(["provider": "generic", "idToken": linkToken, "nonce": "nonce-grace-0000001"]), token: ownerToken)
                #expect(linked.status == 201 && linked.object["provider"] as? String == "generic", "\(linked.text)")
                let identityId = try #require(linked.object["id"] as? String)
                let listedIdentities = try await gateway.request(.GET, "/v1/account/identities", token: ownerToken)
                #expect((listedIdentities.object["identities"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [identityId], "\(listedIdentities.text)")
                let viaProvider = try await Self.idToken(provider, sub: "grace-at-provider", nonce: "nonce-grace-0000002", claims: ["email": "grace@provider.example", "email_verified": true])
                let signedIn = try await gateway.request(.POST, "/v1/sessions/oidc", json: Self.json(["provider": "generic", "idToken": viaProvider, "nonce": "nonce-grace-0000002"]))
                #expect(signedIn.status == 200 && signedIn.object["accountId"] as? String == ownerId, "\(signedIn.text)")
                // Another account's session can neither unlink it nor take it.
                let (strangerToken, _) = try await gateway.signUp("mallory@example.org")
                let foreign = try await gateway.request(.DELETE, "/v1/account/identities/\(identityId)", token: strangerToken)
                #expect(foreign.status == 404 && foreign.code == "account.identityNotFound", "\(foreign.text)")
                let theirs = try await Self.idToken(provider, sub: "grace-at-provider", nonce: "nonce-grace-0000003", claims: ["email": "grace@provider.example", "email_verified": true])
                let taken = try await gateway.request(.POST, "/v1/account/identities", json: Self.json(["provider": "generic", "idToken": theirs, "nonce": "nonce-grace-0000003"]), token: strangerToken)
                #expect(taken.status == 409 && taken.code == "account.credentialsTaken", "\(taken.text)")
                let unlinked = try await gateway.request(.DELETE, "/v1/account/identities/\(identityId)", token: ownerToken)
                #expect(unlinked.status == 204, "\(unlinked.text)")
                #expect(try await gateway.request(.DELETE, "/v1/account/identities/\(identityId)", token: ownerToken).code == "account.identityNotFound")
                // The provider-made account cannot drop its only way in.
                let adaToken = try #require(Self.sessionToken(afterRotation))
                let adaIdentity = try #require(((try await gateway.request(.GET, "/v1/account/identities", token: adaToken)).object["identities"] as? [[String: Any]])?.first?["id"] as? String)
                let last = try await gateway.request(.DELETE, "/v1/account/identities/\(adaIdentity)", token: adaToken)
                #expect(last.status == 409 && last.code == "account.lastSignInMethod", "\(last.text)")

                // An address the provider does not vouch for never reaches an account that has it.
                let mallory = try await Self.idToken(provider, sub: "mallory", nonce: "nonce-mallory-00001", claims: ["email": "grace@example.org", "email_verified": false])
                let takeover = try await gateway.request(.POST, "/v1/sessions/oidc", json: Self.json(["provider": "generic", "idToken": mallory, "nonce": "nonce-mallory-00001"]))
                #expect(takeover.status == 202 && takeover.object["signUp"] != nil && Self.sessionToken(takeover) == nil, "\(takeover.text)")
                #expect(!takeover.text.contains("grace@example.org"), "the address is not offered")

                // The web flow's code: the authorization URL, the provider's page answered, the code exchanged with PKCE.
                let verifier = "verifier-" + UUID().uuidString + UUID().uuidString
                let challenge = Data(SHA256.hash(data: Array(verifier.utf8))).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                let redirect = "http://localhost:8080/account/oidc/generic/callback"
                let authorization = try await gateway.request(.POST, "/v1/sessions/oidc/authorization", json: Self.json([
                    "provider": "generic", "redirectUri": redirect, "state": "state-0123456789abcdef", "nonce": "nonce-web-0123456789", "codeChallenge": challenge,
                ]))
                let url = try #require(authorization.object["url"] as? String, "\(authorization.text)")
                #expect(url.hasPrefix(provider.issuer))
                try await provider.control("/users/web-user", method: "PUT", ["email": "web@example.org", "email_verified": true, "given_name": "Web"])
                // The browser's part, without following the provider's redirect (the test reads it).
                let browser = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
                defer { _ = browser.shutdown() }
                var form = HTTPClientRequest(url: url)
                form.method = .POST
                form.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                form.body = .bytes(.init(string: "sub=web-user"))
                let page = try await browser.execute(form, timeout: .seconds(10))
                let location = try #require(page.headers.first(name: "Location"), "status \(page.status)")
                let query = Dictionary((URLComponents(string: location)?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
                #expect(query["state"] == "state-0123456789abcdef")
                let code = try #require(query["code"])
                let withoutVerifier = try await gateway.request(.POST, "/v1/sessions/oidc", json: Self.json([
                    "provider": "generic", "authorizationCode": code, "codeVerifier": "not-the-verifier-0000000000000000000000000000", "redirectUri": redirect, "nonce": "nonce-web-0123456789",
                ]))
                #expect(withoutVerifier.status == 401 && withoutVerifier.code == "account.invalidIdentityToken", "\(withoutVerifier.text)")
                // A refused exchange spends the code at some providers: ask for a new one.
                let page2 = try await browser.execute(form, timeout: .seconds(10))
                let code2 = try #require((URLComponents(string: page2.headers.first(name: "Location") ?? "")?.queryItems ?? []).first { $0.name == "code" }?.value)
                let web = try await gateway.request(.POST, "/v1/sessions/oidc", json: Self.json([
                    "provider": "generic", "authorizationCode": code2, "codeVerifier": verifier, "redirectUri": redirect, "nonce": "nonce-web-0123456789",
                ]))
                #expect(web.status == 201, "\(web.text)")
                #expect((web.object["details"] as? [String: Any])?["userId"] as? String == "web@example.org")
            }
        } catch {
            await provider.stop()
            throw error
        }
        await provider.stop()
    }

    /// The provider's part of a console flow that began at `authorize`: the person signs in as `sub`; the callback's
    /// path and query on the console, as the provider redirects the browser there.
    static func providerCallback(_ authorize: String, sub: String, http: HTTPClient) async throws -> String {
        var form = HTTPClientRequest(url: authorize)
        form.method = .POST
        form.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        form.body = .bytes(.init(string: "sub=\(sub)"))
        let page = try await http.execute(form, timeout: .seconds(10))
        let location = try #require(page.headers.first(name: "Location"), "status \(page.status)")
        let callback = try #require(URLComponents(string: location))
        return callback.path + "?" + (callback.percentEncodedQuery ?? "")
    }

    @Test("the console's identities page: a provider linked through its own sign-in (the flow bound to this browser), listed, unlinked; never an account's last way in")
    func consoleLinking() async throws {
        let provider = try await OIDCProviderProcess.startGeneric()
        do {
            try await provider.control("/_control/clients", [
                "client_id": "konto-web", "client_secret": "s3cret", "token_endpoint_auth_method": "client_secret_post",
                "redirect_uris": ["https://accounts.example.org/account/oidc/generic/callback"],
            ])
            try await provider.control("/users/ada-at-generic", method: "PUT", ["email": "ada@generic.example", "email_verified": true, "given_name": "Ada"])
            try await provider.control("/users/grace-at-generic", method: "PUT", ["email": "grace@generic.example", "email_verified": true, "given_name": "Grace", "family_name": "Hopper"])
            let providers = IdentityProviders([
                IdentityProvider(name: "generic", displayName: "Generic ID", issuer: provider.issuer, clientId: "konto-web", authentication: .secret(SecretString("s3cret"))),
            ])
            try await GatewayHarness.withGateway(configure: { $0.publicURL = "https://accounts.example.org" }, identityOptions: Self.options, providers: providers) { gateway in
                let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
                defer { _ = http.shutdown() }
                try await ConsoleBrowser.withClient { client in
                    var browser = ConsoleBrowser(baseURL: gateway.baseURL, http: client)
                    _ = try await browser.get("/account/signup")
                    _ = try await browser.post("/account/signup", [
                        ("userId", "ada@example.org"), ("password", "correct horse battery"), ("name[givenName]", "Ada"), ("name[familyName]", "Lovelace"),
                    ])
                    #expect(try await browser.get("/account/").html.contains(#"id="identities-link""#))
                    let empty = try await browser.get("/account/identities")
                    #expect(empty.html.contains(#"id="no-identities""#) && empty.html.contains(#"id="link-generic""#) && empty.html.contains("Link Generic ID"))

                    // Linking: to the provider with the flow's secrets in this browser's cookie; back, linked.
                    // The page sends the browser on itself (the pages' CSP keeps a form's redirect on this site).
                    let start = try await browser.post("/account/identities/link", [("provider", "generic")])
                    #expect(start.status == 200 && start.html.contains(#"<meta http-equiv="refresh" content="0; url="#))
                    let authorize = try #require(start.html.firstMatch(of: /<a id="continue-link" class="button" href="([^"]+)">/).map {
                        String($0.1).replacingOccurrences(of: "&amp;", with: "&")
                    })
                    #expect(authorize.hasPrefix(provider.issuer) && browser.cookies["konto_oidc"] != nil)
                    let callback = try await Self.providerCallback(authorize, sub: "ada-at-generic", http: http)
                    // Another browser (no flow cookie) cannot use the code.
                    var stranger = ConsoleBrowser(baseURL: gateway.baseURL, http: client)
                    #expect(try await stranger.get(callback).status == 403)
                    let linked = try await browser.get(callback)
                    #expect(linked.status == 303 && linked.location == "/account/identities?done=linked", "\(linked.html)")
                    #expect(browser.cookies["konto_oidc"] == nil)
                    let listed = try await browser.get("/account/identities?done=linked")
                    #expect(listed.html.contains("Linked: it signs you in") && listed.html.contains("Generic ID") && listed.html.contains("ada@generic.example"))
                    let identityId = try #require(listed.html.firstMatch(of: /<li id="identity-([^"]+)" class="identity">/).map { String($0.1) })

                    // Unlinking: the password is still there, so the identity may go.
                    let unlinked = try await browser.post("/account/identities/unlink", [("identityId", identityId)])
                    #expect(unlinked.status == 303 && unlinked.location == "/account/identities?done=unlinked", "\(unlinked.html)")
                    #expect(try await browser.get("/account/identities").html.contains(#"id="no-identities""#))

                    // An account made by the provider has no other way in: unlinking it is refused, and it stays.
                    var grace = ConsoleBrowser(baseURL: gateway.baseURL, http: client)
                    _ = try await grace.get("/account/")
                    let signIn = try await grace.get("/account/oidc/generic")
                    let graceCallback = try await Self.providerCallback(try #require(signIn.location), sub: "grace-at-generic", http: http)
                    let signedIn = try await grace.get(graceCallback)
                    #expect(signedIn.status == 303 && grace.cookies["konto_session"] != nil, "\(signedIn.html)")
                    let own = try await grace.get("/account/identities")
                    let graceIdentity = try #require(own.html.firstMatch(of: /<li id="identity-([^"]+)" class="identity">/).map { String($0.1) })
                    let refused = try await grace.post("/account/identities/unlink", [("identityId", graceIdentity)])
                    #expect(refused.status == 409 && refused.html.contains("only way to sign in"), "\(refused.html)")
                    #expect(refused.html.contains(#"id="identity-\#(graceIdentity)""#))
                }
            }
        } catch {
            await provider.stop()
            throw error
        }
        await provider.stop()
    }

    @Test("Sign in with Apple: the client secret Konto signs is Apple's, the name sent once is kept, deletion revokes the token exactly once though the first attempt fails")
    func apple() async throws {
        let key = P256.Signing.PrivateKey()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-apple-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let publicKey = directory.appendingPathComponent("public.pem").path
        try key.publicKey.pemRepresentation.write(toFile: publicKey, atomically: true, encoding: .utf8)
        let apple = try await OIDCProviderProcess.startApple(teamId: "TEAM123456", keyId: "KEY1234567", publicKeyPath: publicKey, clientIds: ["org.example.app", "org.example.web"])
        do {
            let providers = IdentityProviders([
                IdentityProvider(
                    name: "apple", displayName: "Apple", issuer: apple.issuer, clientId: "org.example.web",
                    authentication: .appleKey(teamId: "TEAM123456", keyId: "KEY1234567", privateKey: key),
                    scopes: ["openid", "name", "email"], audiences: ["org.example.app"], hashedNonce: true, isApple: true
                ),
            ])
            try await GatewayHarness.withGateway(identityOptions: Self.options, providers: providers) { gateway in
                // What the app holds after ASAuthorizationAppleIDProvider: the token for the hashed nonce, the code, the name.
                try await apple.control("/_control/users", ["sub": "001234.apple", "email": "tim@privaterelay.appleid.com", "email_verified": "true"])
                let minted = try await apple.control("/_control/id-token", ["sub": "001234.apple", "aud": "org.example.app", "nonce": Self.hashed("raw-nonce-apple-0001")])
                let body = Self.json([
                    "provider": "apple", "idToken": try #require(minted["id_token"] as? String), "nonce": "raw-nonce-apple-0001",
                    "authorizationCode": try #require(minted["authorization_code"] as? String), "name": ["givenName": "Tim", "familyName": "Apple"],
                ])
                let created = try await gateway.request(.POST, "/v1/sessions/oidc", json: body)
                #expect(created.status == 201, "\(created.text)")
                let token = try #require(Self.sessionToken(created))
                #expect(((created.object["details"] as? [String: Any])?["name"] as? [String: Any])?["givenName"] as? String == "Tim")
                // The stand-in checked the client secret Konto signed for the code exchange.
                let secrets = try await apple.control("/_control/client-secrets", method: "GET")
                let seen = try #require(secrets["client_secrets"] as? [[String: Any]])
                #expect(!seen.isEmpty && seen.allSatisfy { $0["valid"] as? Bool == true }, "\(seen)")
                // The name came once; the next sign-in has none and keeps it.
                let next = try await apple.control("/_control/id-token", ["sub": "001234.apple", "aud": "org.example.app", "nonce": Self.hashed("raw-nonce-apple-0002")])
                let signedIn = try await gateway.request(.POST, "/v1/sessions/oidc", json: Self.json([
                    "provider": "apple", "idToken": try #require(next["id_token"] as? String), "nonce": "raw-nonce-apple-0002",
                ]))
                #expect(signedIn.status == 200 && ((signedIn.object["details"] as? [String: Any])?["name"] as? [String: Any])?["familyName"] as? String == "Apple", "\(signedIn.text)")
                // The raw nonce's hash is what Apple holds; the hash itself is not the nonce.
                let third = try await apple.control("/_control/id-token", ["sub": "001234.apple", "aud": "org.example.app", "nonce": Self.hashed("raw-nonce-apple-0003")])
                let hashSent = try await gateway.request(.POST, "/v1/sessions/oidc", json: Self.json([
                    "provider": "apple", "idToken": try #require(third["id_token"] as? String), "nonce": Self.hashed("raw-nonce-apple-0003"),
                ]))
                #expect(hashSent.status == 401 && hashSent.code == "account.invalidIdentityToken")

                // Deletion revokes the refresh token; the first attempt fails and is retried; one revocation in all.
                try await apple.control("/_control/fail-revocations", ["count": 1])
                let deleted = try await gateway.request(.DELETE, "/v1/account", token: token)
                #expect(deleted.status == 204, "\(deleted.text)")
                let deadline = ContinuousClock.now + .seconds(30)
                var revocations: [[String: Any]] = []
                var failed = 0
                while ContinuousClock.now < deadline {
                    let state = try await apple.control("/_control/revocations", method: "GET")
                    revocations = state["revocations"] as? [[String: Any]] ?? []
                    failed = state["failed"] as? Int ?? 0
                    if !revocations.isEmpty { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(failed == 1)
                #expect(revocations.count == 1 && revocations.first?["client_id"] as? String == "org.example.app" && revocations.first?["token_type_hint"] as? String == "refresh_token", "\(revocations)")
            }
        } catch {
            await apple.stop()
            throw error
        }
        await apple.stop()
    }

    static let formSafe = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// The hidden inputs of an HTML form, as a browser would send them (the stand-in escapes with Python's html.escape).
    static func hiddenFields(_ html: String) -> [(String, String)] {
        html.matches(of: /<input type="hidden" name="([^"]*)" value="([^"]*)">/).map { match in
            let value = String(match.output.2).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#x27;", with: "'")
                .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
            return (String(match.output.1), value)
        }
    }

    @Test("Sign in with Apple on the web, through the console: the code flow with PKCE, Apple's form_post with the name it sends once, the account made with it")
    func appleWeb() async throws {
        let key = P256.Signing.PrivateKey()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-apple-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let publicKey = directory.appendingPathComponent("public.pem").path
        try key.publicKey.pemRepresentation.write(toFile: publicKey, atomically: true, encoding: .utf8)
        let apple = try await OIDCProviderProcess.startApple(teamId: "TEAM123456", keyId: "KEY1234567", publicKeyPath: publicKey, clientIds: ["org.example.web"])
        do {
            let providers = IdentityProviders([
                IdentityProvider(
                    name: "apple", displayName: "Apple", issuer: apple.issuer, clientId: "org.example.web",
                    authentication: .appleKey(teamId: "TEAM123456", keyId: "KEY1234567", privateKey: key),
                    scopes: ["openid", "name", "email"], hashedNonce: true, isApple: true
                ),
            ])
            // The console's public address (where Apple posts back); the test posts the form to the gateway itself.
            try await GatewayHarness.withGateway(configure: { $0.publicURL = "https://accounts.example.org" }, identityOptions: Self.options, providers: providers) { gateway in
                let browser = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
                defer { _ = browser.shutdown() }
                let setup = try await gateway.request(.GET, "/account/")
                #expect(setup.text.contains(#"id="oidc-apple""#) && setup.text.contains("Continue with Apple"))

                // "Continue with Apple": to Apple's authorization page, the flow's secrets in a cookie.
                let start = try await browser.execute(HTTPClientRequest(url: gateway.baseURL + "/account/oidc/apple"), timeout: .seconds(10))
                #expect(start.status == .seeOther)
                let authorize = try #require(start.headers.first(name: "Location"))
                let flowCookie = try #require(start.headers["Set-Cookie"].first { $0.hasPrefix("konto_oidc=") }?.split(separator: ";").first.map(String.init))
                let query = (URLComponents(string: authorize)?.queryItems ?? []).map { ($0.name, $0.value ?? "") }
                let parameters = Dictionary(query, uniquingKeysWith: { $1 })
                #expect(parameters["response_mode"] == "form_post" && parameters["code_challenge_method"] == "S256" && parameters["client_id"] == "org.example.web")
                #expect(parameters["redirect_uri"] == "https://accounts.example.org/account/oidc/apple/callback")

                // The person signs in at Apple; Apple's page posts the code, the state and (the first time) the name.
                try await apple.control("/_control/users", ["sub": "000777.web", "email": "ada@icloud.example", "email_verified": "true", "name": ["firstName": "Ada", "lastName": "Lovelace"]])
                var form = HTTPClientRequest(url: apple.issuer + "/auth/authorize")
                form.method = .POST
                form.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                form.body = .bytes(ByteBuffer(string: (query + [("sub", "000777.web"), ("action", "continue")]).map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: Self.formSafe) ?? "")" }.joined(separator: "&")))
                let answer = try await browser.execute(form, timeout: .seconds(10))
                let page = String(buffer: try await answer.body.collect(upTo: 1 << 20))
                let posted = Self.hiddenFields(page)
                #expect(posted.contains { $0.0 == "user" }, "Apple sends the name the first time: \(page)")

                // Its form_post to the callback, in the browser that started the flow.
                var callback = HTTPClientRequest(url: gateway.baseURL + "/account/oidc/apple/callback")
                callback.method = .POST
                callback.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                callback.headers.add(name: "Cookie", value: flowCookie)
                callback.body = .bytes(ByteBuffer(string: posted.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: Self.formSafe) ?? "")" }.joined(separator: "&")))
                let signedIn = try await browser.execute(callback, timeout: .seconds(10))
                let signedInPage = String(buffer: try await signedIn.body.collect(upTo: 1 << 20))
                #expect(signedIn.status == .seeOther, "\(signedInPage)")
                let session = try #require(signedIn.headers["Set-Cookie"].first { $0.hasPrefix("konto_session=") }?.split(separator: ";").first?.dropFirst("konto_session=".count))
                let account = try await gateway.request(.GET, "/v1/account", token: String(session))
                let details = try #require(account.object["details"] as? [String: Any])
                #expect(details["userId"] as? String == "ada@icloud.example" && details["emailVerified"] as? Bool == true, "\(account.text)")
                #expect((details["name"] as? [String: Any])?["familyName"] as? String == "Lovelace", "\(account.text)")
                // The stand-in checked the client secret of the web client's exchange.
                let seen = try #require(try await apple.control("/_control/client-secrets", method: "GET")["client_secrets"] as? [[String: Any]])
                #expect(!seen.isEmpty && seen.allSatisfy { $0["valid"] as? Bool == true && $0["client_id"] as? String == "org.example.web" }, "\(seen)")

                // The callback without the flow's cookie (another browser, a forged post) is refused.
                var forged = callback
                forged.headers.remove(name: "Cookie")
                let refused = try await browser.execute(forged, timeout: .seconds(10))
                #expect(refused.status == .forbidden)
            }
        } catch {
            await apple.stop()
            throw error
        }
        await apple.stop()
    }
}
