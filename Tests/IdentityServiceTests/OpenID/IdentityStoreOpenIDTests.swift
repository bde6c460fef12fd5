import Crypto
import Foundation
@testable import IdentityService
import JWTKit
import KontoContracts
import KontoModel
import KontoWebAuthn
import Testing

/// Konto as an OpenID Provider, Identity's side: the authorization decisions, the code and refresh exchanges with
/// their hostile cases, client authentication, access tokens, introspection and revocation, over both storages.
@Suite("Identity: OpenID Provider")
struct IdentityStoreOpenIDTests {
    static let issuer = "https://accounts.example.org"
    static let signingKey = P256.Signing.PrivateKey()
    static let partnerKey = P256.Signing.PrivateKey()
    static let dashboardSecret = "dashboard-secret-that-is-long-enough"

    static func settings() throws -> OpenIDProviderSettings {
        let partnerJWK = try #require(try OpenIDSigningKey(pem: partnerKey.pemRepresentation).publicKey as IdentityJSONWebKey?)
        let clients = OpenIDClients([
            OpenIDClient(id: "native", name: "Study App", authentication: .none, redirectURIs: ["https://app.example.org/cb"],
                         scopes: ["openid", "email", "profile", "offline_access"]),
            OpenIDClient(id: "dashboard", name: "Dashboard", authentication: .secret(method: "client_secret_basic", digest: Array(SHA256.hash(data: Data(dashboardSecret.utf8)))),
                         redirectURIs: ["https://dash.example.org/cb"], postLogoutRedirectURIs: ["https://dash.example.org/signed-out"],
                         scopes: ["openid", "email", "offline_access"], isFirstParty: true),
            OpenIDClient(id: "partner", name: "Partner", authentication: .privateKeyJWT(keys: [partnerJWK]), redirectURIs: ["https://partner.example.org/cb"],
                         scopes: ["openid", "email"], isFirstParty: true),
        ])
        return try OpenIDProviderSettings(issuer: issuer, keys: OpenIDSigningKeys([OpenIDSigningKey(pem: signingKey.pemRepresentation)]), clients: clients)
    }

    static func fixture(_ storage: any IdentityStorage) throws -> IdentityFixture {
        var options = IdentityOptions()
        options.openID = try settings()
        return try IdentityFixture(storage: storage, options: options)
    }

    struct PKCE {
        let verifier = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
        var challenge: String { Base64URL.encode(Array(SHA256.hash(data: Data(verifier.utf8)))) }
    }

    static func parameters(client: String, redirect: String, pkce: PKCE, scope: String = "openid email", extra: [(String, String)] = []) -> [IdentityOpenIDParameter] {
        ([("response_type", "code"), ("client_id", client), ("redirect_uri", redirect), ("scope", scope), ("state", "st-1"), ("nonce", "no-1"),
          ("code_challenge", pkce.challenge), ("code_challenge_method", "S256")] + extra).map { IdentityOpenIDParameter($0.0, $0.1) }
    }

    static func query(_ location: String?) -> [String: String] {
        guard let location, let items = URLComponents(string: location)?.queryItems else { return [:] }
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    static let dashboard = IdentityOpenIDClientCredentials(basicId: "dashboard", basicSecret: SecretString(dashboardSecret))
    static let native = IdentityOpenIDClientCredentials(clientId: "native")

    /// Signs in through the dashboard (first party: no consent) and exchanges the code; the tokens.
    static func signIn(_ fixture: IdentityFixture, token: BearerToken, scope: String = "openid email offline_access") async throws -> IdentityOpenIDTokens {
        let pkce = PKCE()
        let answer = try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(
            token: token, parameters: parameters(client: "dashboard", redirect: "https://dash.example.org/cb", pkce: pkce, scope: scope), requestedAt: fixture.clock.now
        ))
        let code = try #require(query(answer.location)["code"], "\(answer)")
        let response = try await fixture.store.openIDToken(IdentityOpenIDTokenRequest(
            client: dashboard, grantType: "authorization_code", code: SecretString(code), redirectURI: "https://dash.example.org/cb", codeVerifier: SecretString(pkce.verifier)
        ))
        return try #require(response.tokens, "\(String(describing: response.error))")
    }

    @Test("authorize: refusals on the page, errors to the client, sign-in, consent once per client and scopes, prompt, max_age; the code's redirect carries state and iss", arguments: IdentityStorageKind.allCases)
    func authorize(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Self.fixture(storage)
            let token = try await fixture.signUp().session.token
            let pkce = PKCE()
            let native = Self.parameters(client: "native", redirect: "https://app.example.org/cb", pkce: pkce)
            let now = fixture.clock.now
            func ask(_ parameters: [IdentityOpenIDParameter], token: BearerToken?, consent: Bool = false, requestedAt: Timestamp? = nil) async throws -> IdentityOpenIDAuthorization {
                try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(token: token, parameters: parameters, requestedAt: requestedAt ?? now, consentGiven: consent))
            }
            // An unknown client, a redirect URI one character off: shown, never redirected.
            var unknown = native
            unknown[1] = IdentityOpenIDParameter("client_id", "stranger")
            #expect(try await ask(unknown, token: token).outcome == .refused)
            var offByOne = native
            offByOne[2] = IdentityOpenIDParameter("redirect_uri", "https://app.example.org/cb/")
            let refused = try await ask(offByOne, token: token)
            #expect(refused.outcome == .refused && refused.location == nil)
            // Plain PKCE: back to the client, with its state and the issuer.
            var plain = native
            plain[7] = IdentityOpenIDParameter("code_challenge_method", "plain")
            let plainAnswer = try await ask(plain, token: token)
            #expect(plainAnswer.outcome == .redirect && Self.query(plainAnswer.location)["error"] == "invalid_request")
            #expect(Self.query(plainAnswer.location)["state"] == "st-1" && Self.query(plainAnswer.location)["iss"] == Self.issuer)

            // No session: sign in; prompt=none: login_required to the client.
            #expect(try await ask(native, token: nil) == .signIn(.login))
            #expect(try await ask(native, token: BearerToken("not-a-session")) == .signIn(.login))
            let silent = try await ask(native + [IdentityOpenIDParameter("prompt", "none")], token: nil)
            #expect(Self.query(silent.location)["error"] == "login_required" && silent.location?.hasPrefix("https://app.example.org/cb?") == true)

            // A third party: consent first (prompt=none: consent_required), then a code; remembered afterwards.
            let consent = try await ask(native, token: token)
            #expect(consent.outcome == .consent && consent.client == IdentityOpenIDClientSummary(id: "native", name: "Study App") && consent.scopes == ["email", "openid"])
            #expect(Self.query(try await ask(native + [IdentityOpenIDParameter("prompt", "none")], token: token).location)["error"] == "consent_required")
            let denied = try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(token: token, parameters: native, requestedAt: now, consentDenied: true))
            #expect(Self.query(denied.location)["error"] == "access_denied" && Self.query(denied.location)["state"] == "st-1")
            #expect(try await ask(native, token: token).outcome == .consent, "a denial is not remembered as consent")
            let granted = try await ask(native, token: token, consent: true)
            #expect(granted.outcome == .redirect && Self.query(granted.location)["code"]?.count == 43)
            #expect(Self.query(granted.location)["state"] == "st-1" && Self.query(granted.location)["iss"] == Self.issuer)
            #expect(Self.query(try await ask(native, token: token).location)["code"] != nil, "consent remembered")
            #expect(try await ask(native + [IdentityOpenIDParameter("prompt", "consent")], token: token).outcome == .consent)
            let wider = Self.parameters(client: "native", redirect: "https://app.example.org/cb", pkce: pkce, scope: "openid email profile")
            #expect(try await ask(wider, token: token).outcome == .consent, "a scope not consented to")
            let entries = try await storage.auditEntries(AuditQuery(type: "oidc.consented", limit: 10))
            #expect(entries.count == 1 && entries.first?.record.factsText.contains("native") == true)

            // prompt=login: a sign-in after the request, max_age: one recent enough.
            #expect(try await ask(native + [IdentityOpenIDParameter("prompt", "login")], token: token, requestedAt: now.adding(.seconds(1))) == .signIn(.login))
            #expect(Self.query(try await ask(native + [IdentityOpenIDParameter("prompt", "login")], token: token, requestedAt: now).location)["code"] != nil)
            fixture.clock.advance(by: .seconds(600))
            let later = fixture.clock.now
            #expect(try await ask(native + [IdentityOpenIDParameter("max_age", "300")], token: token, requestedAt: later) == .signIn(.reauthenticate))
            #expect(Self.query(try await ask(native + [IdentityOpenIDParameter("max_age", "900")], token: token, requestedAt: later).location)["code"] != nil)
            // A sign-in made since the request satisfies any max_age, 0 too (else max_age=0 could never be met).
            #expect(Self.query(try await ask(native + [IdentityOpenIDParameter("max_age", "0")], token: token, requestedAt: now).location)["code"] != nil)
            #expect(try await ask(native + [IdentityOpenIDParameter("max_age", "0")], token: token, requestedAt: later) == .signIn(.reauthenticate))
            // aal2 asked of an account without a second factor: acr is voluntary, the ID token will say aal1.
            #expect(Self.query(try await ask(native + [IdentityOpenIDParameter("acr_values", "aal2")], token: token).location)["code"] != nil)
        }
    }

    @Test("the code exchange: once, by its client, with its redirect URI and PKCE verifier; a second use revokes the tokens the first gave", arguments: IdentityStorageKind.allCases)
    func codeExchange(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Self.fixture(storage)
            let signedUp = try await fixture.signUp()
            let token = signedUp.session.token
            func code(_ pkce: PKCE) async throws -> String {
                let answer = try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(
                    token: token, parameters: Self.parameters(client: "dashboard", redirect: "https://dash.example.org/cb", pkce: pkce), requestedAt: fixture.clock.now
                ))
                return try #require(Self.query(answer.location)["code"])
            }
            func exchange(_ code: String, verifier: String?, redirect: String = "https://dash.example.org/cb", client: IdentityOpenIDClientCredentials = Self.dashboard) async throws -> IdentityOpenIDTokenResponse {
                try await fixture.store.openIDToken(IdentityOpenIDTokenRequest(
                    client: client, grantType: "authorization_code", code: SecretString(code), redirectURI: redirect, codeVerifier: verifier.map(SecretString.init)
                ))
            }
            // Hostile first: each uses its code up.
            let offByOne = PKCE()
            let first = try await code(offByOne)
            #expect(try await exchange(first, verifier: offByOne.verifier, redirect: "https://dash.example.org/cb/").error?.error == "invalid_grant")
            #expect(try await exchange(first, verifier: offByOne.verifier).error?.error == "invalid_grant", "used up by the wrong attempt")
            let missing = PKCE()
            #expect(try await exchange(try await code(missing), verifier: nil).error?.error == "invalid_grant")
            let wrong = PKCE()
            #expect(try await exchange(try await code(wrong), verifier: PKCE().verifier).error?.error == "invalid_grant")
            let plain = PKCE()
            let plainCode = try await code(plain)
            #expect(try await exchange(plainCode, verifier: plain.challenge).error?.error == "invalid_grant", "the challenge itself as the verifier")
            let stolen = PKCE()
            #expect(try await exchange(try await code(stolen), verifier: stolen.verifier, client: Self.native).error?.error == "invalid_grant", "another client's code")
            #expect(try await exchange("made-up", verifier: stolen.verifier).error?.error == "invalid_grant")

            // The real exchange: tokens a relying party checks with the JWK Set alone.
            let pkce = PKCE()
            let good = try await code(pkce)
            let tokens = try #require(try await exchange(good, verifier: pkce.verifier).tokens)
            #expect(tokens.tokenType == "Bearer" && tokens.expiresIn == 300 && tokens.scope == "email openid" && tokens.refreshToken == nil)
            let jwks = String(decoding: try JSONEncoder().encode(["keys": try Self.settings().keys.published]), as: UTF8.self)
            let verifier = try await JWTKeyCollection().add(jwksJSON: jwks)
            let idToken = try await verifier.verify(try #require(tokens.idToken), as: IDTokenClaims.self)
            #expect(idToken.nonce == "no-1" && idToken.aud.value == ["dashboard"] && idToken.sub.value == signedUp.accountId && idToken.acr == "aal1" && idToken.amr == ["pwd"], "\(String(describing: idToken.amr))")
            let access = try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: tokens.accessToken))
            #expect(access.error == nil && access.accountId == signedUp.accountId && access.clientId == "dashboard" && access.scopes == ["email", "openid"])
            #expect(access.email == "leland@stanford.edu" && access.emailVerified == false)
            // An ID token is no access token, though the same key signed it.
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: BearerToken(try #require(tokens.idToken)))).error?.error == "invalid_token")

            // The same code again: refused, and the access token it gave stops working.
            #expect(try await exchange(good, verifier: pkce.verifier).error?.error == "invalid_grant")
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: tokens.accessToken)).error?.status == 401)
            let reused = try await storage.auditEntries(AuditQuery(type: "oidc.code_reused", limit: 10))
            // The off-by-one code's second try was a reuse too (nothing to revoke); this one revoked a grant.
            #expect(reused.map { $0.record.factsText.contains("\"grantRevoked\":\"true\"") } == [true, false])

            // A code waits 60 seconds at most.
            let late = PKCE()
            let lateCode = try await code(late)
            fixture.clock.advance(by: .seconds(61))
            #expect(try await exchange(lateCode, verifier: late.verifier).error?.error == "invalid_grant")
        }
    }

    @Test("refresh tokens rotate; a rotated one reused ends the family, its access tokens with it; another client's is refused; a new password ends them", arguments: IdentityStorageKind.allCases)
    func refresh(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Self.fixture(storage)
            let signedUp = try await fixture.signUp()
            let first = try await Self.signIn(fixture, token: signedUp.session.token)
            let refreshToken = try #require(first.refreshToken)
            func refresh(_ token: BearerToken, client: IdentityOpenIDClientCredentials = Self.dashboard, scope: String? = nil) async throws -> IdentityOpenIDTokenResponse {
                try await fixture.store.openIDToken(IdentityOpenIDTokenRequest(client: client, grantType: "refresh_token", refreshToken: SecretString(token.value), scope: scope))
            }
            #expect(try await refresh(refreshToken, client: Self.native).error?.error == "invalid_grant", "another client's")
            let narrower = try #require(try await refresh(refreshToken, scope: "openid").tokens)
            #expect(narrower.scope == "openid" && narrower.refreshToken != nil && narrower.refreshToken != refreshToken)
            let idToken = try await JWTKeyCollection().add(jwksJSON: String(decoding: try JSONEncoder().encode(["keys": try Self.settings().keys.published]), as: UTF8.self))
                .verify(try #require(narrower.idToken), as: IDTokenClaims.self)
            #expect(idToken.nonce == nil, "no nonce in a refreshed ID token")
            let current = try #require(narrower.refreshToken)
            #expect(try await refresh(current, scope: "openid profile").error?.error == "invalid_scope")
            // The token rotated out, again: the family ends: the current refresh token and every access token.
            #expect(try await refresh(refreshToken).error?.error == "invalid_grant")
            #expect(try await refresh(current).error?.error == "invalid_grant")
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: narrower.accessToken)).error?.error == "invalid_token")
            #expect(try await storage.auditEntries(AuditQuery(type: "oidc.refresh_reused", limit: 10)).count == 1)

            // A new password ends a grant.
            let second = try await Self.signIn(fixture, token: signedUp.session.token)
            _ = try await fixture.store.changePassword(IdentityChangePasswordRequest(
                token: signedUp.session.token, currentPassword: SecretString("correct horse battery"), newPassword: SecretString("another long passphrase")
            ))
            #expect(try await refresh(try #require(second.refreshToken)).error?.error == "invalid_grant")
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: second.accessToken)).error?.error == "invalid_token")
        }
    }

    @Test("client authentication: the registered method only, the right secret, a private_key_jwt assertion for this provider used once; all invalid_client (401)")
    func clientAuthentication() async throws {
        let fixture = try Self.fixture(InMemoryIdentityStorage())
        func exchange(_ client: IdentityOpenIDClientCredentials) async throws -> IdentityOpenIDError? {
            try await fixture.store.openIDToken(IdentityOpenIDTokenRequest(client: client, grantType: "refresh_token", refreshToken: SecretString("unknown"))).error
        }
        // A known client that proves itself gets as far as the grant.
        #expect(try await exchange(Self.dashboard)?.error == "invalid_grant")
        #expect(try await exchange(Self.native)?.error == "invalid_grant")
        for (client, comment) in [
            (IdentityOpenIDClientCredentials(basicId: "dashboard", basicSecret: SecretString("wrong")), "a wrong secret"),
            (IdentityOpenIDClientCredentials(clientId: "dashboard", clientSecret: SecretString(Self.dashboardSecret)), "client_secret_post for a basic client"),
            (IdentityOpenIDClientCredentials(clientId: "dashboard"), "no secret"),
            (IdentityOpenIDClientCredentials(basicId: "dashboard", basicSecret: SecretString(Self.dashboardSecret), clientId: "native"), "two ids"),
            (IdentityOpenIDClientCredentials(clientId: "native", clientSecret: SecretString("anything")), "a secret from a public client"),
            (IdentityOpenIDClientCredentials(clientId: "stranger"), "unknown"),
            (IdentityOpenIDClientCredentials(), "nobody"),
        ] {
            let error = try await exchange(client)
            #expect(error?.error == "invalid_client" && error?.status == 401, "\(comment)")
        }

        // private_key_jwt.
        let keys = try await JWTKeyCollection().add(ecdsa: ES256PrivateKey(pem: Self.partnerKey.pemRepresentation))
        func assertion(aud: String = Self.issuer + "/oauth2/token", jti: String = UUID().uuidString, lifetime: TimeInterval = 60, key: JWTKeyCollection? = nil) async throws -> IdentityOpenIDClientCredentials {
            let now = fixture.clock.now.date
            let claims = ClientAssertionClaims(
                iss: IssuerClaim(value: "partner"), sub: SubjectClaim(value: "partner"), aud: AudienceClaim(value: [aud]),
                exp: ExpirationClaim(value: now.addingTimeInterval(lifetime)), jti: IDClaim(value: jti)
            )
            let signed = try await (key ?? keys).sign(claims)
            return IdentityOpenIDClientCredentials(assertionType: OpenIDProvider.assertionType, assertion: SecretString(signed))
        }
        #expect(try await exchange(try await assertion())?.error == "invalid_grant")
        #expect(try await exchange(try await assertion(aud: Self.issuer))?.error == "invalid_grant", "the issuer as audience")
        let replayed = try await assertion(jti: "once")
        #expect(try await exchange(replayed)?.error == "invalid_grant")
        #expect(try await exchange(replayed)?.error == "invalid_client", "its jti seen before")
        #expect(try await exchange(try await assertion(aud: "https://elsewhere.example.org/token"))?.error == "invalid_client")
        #expect(try await exchange(try await assertion(lifetime: -5))?.error == "invalid_client", "expired")
        #expect(try await exchange(try await assertion(lifetime: 3_600))?.error == "invalid_client", "too long")
        let stranger = await JWTKeyCollection().add(ecdsa: ES256PrivateKey())
        #expect(try await exchange(try await assertion(key: stranger))?.error == "invalid_client", "another key")
    }

    @Test("introspection for confidential clients of their own tokens; revocation ends the grant; neither tells another client anything", arguments: IdentityStorageKind.allCases)
    func introspectionAndRevocation(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Self.fixture(storage)
            let signedUp = try await fixture.signUp()
            let tokens = try await Self.signIn(fixture, token: signedUp.session.token)
            let refreshToken = try #require(tokens.refreshToken)
            func introspect(_ token: String, client: IdentityOpenIDClientCredentials = Self.dashboard) async throws -> IdentityOpenIDIntrospection {
                try await fixture.store.openIDIntrospect(IdentityOpenIDTokenQuery(client: client, token: SecretString(token)))
            }
            let access = try await introspect(tokens.accessToken.value)
            #expect(access.active && access.clientId == "dashboard" && access.subject == signedUp.accountId && access.scope == "email offline_access openid")
            #expect(access.issuer == Self.issuer && access.tokenType == "Bearer")
            let refresh = try await introspect(refreshToken.value)
            #expect(refresh.active && refresh.tokenType == "refresh_token")
            #expect(try await introspect("nonsense") == .inactive)
            #expect(try await introspect(tokens.accessToken.value, client: Self.native).error?.error == "unauthorized_client")
            #expect(try await introspect(tokens.accessToken.value, client: IdentityOpenIDClientCredentials(basicId: "dashboard", basicSecret: SecretString("x"))).error?.status == 401)

            // Another client revoking it: nothing changes, and it is answered the same.
            let partnerless = try await fixture.store.openIDRevoke(IdentityOpenIDTokenQuery(client: Self.native, token: SecretString(refreshToken.value)))
            #expect(partnerless.error == nil)
            #expect(try await introspect(refreshToken.value).active)
            // Its own client: the grant ends, access token and all.
            #expect(try await fixture.store.openIDRevoke(IdentityOpenIDTokenQuery(client: Self.dashboard, token: SecretString(refreshToken.value))).error == nil)
            #expect(try await introspect(refreshToken.value) == .inactive)
            #expect(try await introspect(tokens.accessToken.value) == .inactive)
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: tokens.accessToken)).error?.error == "invalid_token")
            #expect(try await storage.auditEntries(AuditQuery(type: "oidc.token_revoked", limit: 10)).count == 1)
            // Revoking by the access token works the same.
            let more = try await Self.signIn(fixture, token: signedUp.session.token)
            #expect(try await fixture.store.openIDRevoke(IdentityOpenIDTokenQuery(client: Self.dashboard, token: SecretString(more.accessToken.value), tokenTypeHint: "access_token")).error == nil)
            #expect(try await introspect(try #require(more.refreshToken).value) == .inactive)
        }
    }

    @Test("the owner's applications: consents and live grants by client; revoking one ends both at once; each account sees its own", arguments: IdentityStorageKind.allCases)
    func applications(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Self.fixture(storage)
            let token = try await fixture.signUp().session.token
            let other = try await fixture.signUp("jane@stanford.edu").session.token
            let consented = try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(
                token: token, parameters: Self.parameters(client: "native", redirect: "https://app.example.org/cb", pkce: PKCE()), requestedAt: fixture.clock.now,
                consentGiven: true
            ))
            #expect(consented.outcome == .redirect)
            let tokens = try await Self.signIn(fixture, token: token)
            let listed = try await fixture.store.openIDApplications(IdentitySessionRequest(token: token))
            #expect(listed.applications == [
                IdentityOpenIDApplication(clientId: "dashboard", name: "Dashboard", scopes: ["email", "offline_access", "openid"], consentedAt: nil, grants: 1, lastUsedAt: fixture.clock.now),
                IdentityOpenIDApplication(clientId: "native", name: "Study App", scopes: ["email", "openid"], consentedAt: fixture.clock.now, grants: 0, lastUsedAt: nil),
            ])
            #expect(try await fixture.store.openIDApplications(IdentitySessionRequest(token: other)).applications.isEmpty)
            // The owner's copy of their data lists them as the page does, never a token.
            let export = try await fixture.store.exportAccount(IdentitySecuredRequest(token: token))
            #expect(export.applications == listed.applications)
            let exported = String(decoding: try JSONEncoder().encode(export), as: UTF8.self)
            let refreshToken = try #require(tokens.refreshToken).value
            #expect(!exported.contains(tokens.accessToken.value) && !exported.contains(refreshToken))
            #expect(await identityError { try await fixture.store.revokeOpenIDApplication(IdentityRevokeApplicationRequest(token: other, clientId: "dashboard")) }?.code == AccountError.Code.applicationNotFound)

            #expect(try await fixture.store.revokeOpenIDApplication(IdentityRevokeApplicationRequest(token: token, clientId: "dashboard")).grantsEnded == 1)
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: tokens.accessToken)).error?.error == "invalid_token")
            let refreshed = try await fixture.store.openIDToken(IdentityOpenIDTokenRequest(client: Self.dashboard, grantType: "refresh_token", refreshToken: SecretString(try #require(tokens.refreshToken).value)))
            #expect(refreshed.error?.error == "invalid_grant")
            #expect(await identityError { try await fixture.store.revokeOpenIDApplication(IdentityRevokeApplicationRequest(token: token, clientId: "dashboard")) }?.code == AccountError.Code.applicationNotFound)
            #expect(try await fixture.store.revokeOpenIDApplication(IdentityRevokeApplicationRequest(token: token, clientId: "native")).grantsEnded == 0)
            #expect(try await fixture.store.openIDApplications(IdentitySessionRequest(token: token)).applications.isEmpty)
            #expect(try await storage.auditEntries(AuditQuery(type: "oidc.application_revoked", limit: 10)).count == 2)
            #expect(await identityError { try await fixture.store.openIDApplications(IdentitySessionRequest(token: BearerToken("unknown"))) }?.code == AccountError.Code.unauthenticated)
        }
    }

    @Test("RP-initiated logout: a hint Konto signed for the session's account ends the session and its grants (expired or not); anything less is asked; bad hints and redirect URIs are refused", arguments: IdentityStorageKind.allCases)
    func logout(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try Self.fixture(storage)
            let session = try await fixture.signUp().session.token
            let tokens = try await Self.signIn(fixture, token: session)
            let hint = try #require(tokens.idToken)
            let otherSession = try await fixture.signUp("jane@stanford.edu").session.token
            let othersHint = try #require(try await Self.signIn(fixture, token: otherSession).idToken)
            func logout(_ parameters: [(String, String)], token: BearerToken? = session, confirmed: Bool = false) async throws -> IdentityOpenIDLogout {
                try await fixture.store.openIDLogout(IdentityOpenIDLogoutRequest(token: token, parameters: parameters.map { IdentityOpenIDParameter($0.0, $0.1) }, confirmed: confirmed))
            }
            let signedOut = "https://dash.example.org/signed-out"

            // Refused on the page, nothing ended: a hint Konto did not sign (another key, a changed payload), a
            // parameter twice, a client_id that is not the hint's, an unknown client, a redirect URI not registered
            // (one character off, or without a client to look it up in), an access token as the hint.
            var foreign = JWTHeader()
            foreign.alg = "ES256"
            foreign.typ = "JWT"
            let forged = try await JWTKeyCollection().add(ecdsa: ES256PrivateKey(pem: Self.partnerKey.pemRepresentation)).sign(
                IDTokenHintClaims(iss: IssuerClaim(value: Self.issuer), sub: SubjectClaim(value: "x"), aud: AudienceClaim(value: ["dashboard"]), azp: "dashboard"), header: foreign
            )
            let parts = hint.split(separator: ".")
            let tampered = [String(parts[0]), Base64URL.encode(Array(#"{"iss":"\#(Self.issuer)","sub":"someone","aud":["dashboard"],"azp":"dashboard"}"#.utf8)), String(parts[2])].joined(separator: ".")
            for (parameters, comment) in [
                ([("id_token_hint", forged)], "signed by another key"),
                ([("id_token_hint", tampered)], "a changed payload"),
                ([("id_token_hint", tokens.accessToken.value)], "an access token"),
                ([("id_token_hint", hint), ("id_token_hint", hint)], "twice"),
                ([("id_token_hint", hint), ("client_id", "native")], "another client's id"),
                ([("client_id", "unknown")], "an unknown client"),
                ([("id_token_hint", hint), ("post_logout_redirect_uri", signedOut + "x")], "a redirect URI one character off"),
                ([("client_id", "native"), ("post_logout_redirect_uri", signedOut)], "another client's redirect URI"),
                ([("post_logout_redirect_uri", signedOut)], "a redirect URI without a client"),
            ] {
                let answer = try await logout(parameters)
                #expect(answer.outcome == .refused && answer.location == nil, "\(comment)")
            }
            #expect(try await fixture.store.validateSession(IdentitySessionRequest(token: session)).sessionId.isEmpty == false)

            // Asked, nothing ended: no hint; a client_id alone; another account's hint.
            #expect(try await logout([]) == IdentityOpenIDLogout(outcome: .confirm))
            #expect(try await logout([("client_id", "dashboard"), ("post_logout_redirect_uri", signedOut)]) == IdentityOpenIDLogout(
                outcome: .confirm, client: IdentityOpenIDClientSummary(id: "dashboard", name: "Dashboard")
            ))
            #expect(try await logout([("id_token_hint", othersHint)]).outcome == .confirm)
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: tokens.accessToken)).error == nil)

            // The session's own hint, expired by now: signed out at once, back with the state; the grant ends with it.
            fixture.clock.advance(by: .seconds(600))
            let done = try await logout([("id_token_hint", hint), ("post_logout_redirect_uri", signedOut), ("state", "s t+1")])
            #expect(done.outcome == .loggedOut && done.grantsEnded == 1)
            #expect(Self.query(done.location) == ["state": "s t+1"] && done.location?.hasPrefix(signedOut + "?") == true)
            #expect(await identityError { try await fixture.store.validateSession(IdentitySessionRequest(token: session)) }?.code == AccountError.Code.unauthenticated)
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: tokens.accessToken)).error?.error == "invalid_token")
            let refreshed = try await fixture.store.openIDToken(IdentityOpenIDTokenRequest(
                client: Self.dashboard, grantType: "refresh_token", refreshToken: SecretString(try #require(tokens.refreshToken).value)
            ))
            #expect(refreshed.error?.error == "invalid_grant")
            let audit = try await storage.auditEntries(AuditQuery(type: "oidc.logout", limit: 10))
            #expect(audit.count == 1 && audit.first?.record.factsText.contains("dashboard") == true && audit.first?.record.factsText.contains("grantsEnded") == true)

            // No session (ended just now): nothing to end, back to the application.
            let again = try await logout([("id_token_hint", hint), ("post_logout_redirect_uri", signedOut)])
            #expect(again.outcome == .loggedOut && again.location == signedOut && again.grantsEnded == nil)

            // Confirmed on the page: the other account's session ends without a hint.
            #expect(try await logout([], token: otherSession, confirmed: true) == IdentityOpenIDLogout(outcome: .loggedOut, grantsEnded: 1))
            #expect(await identityError { try await fixture.store.validateSession(IdentitySessionRequest(token: otherSession)) }?.code == AccountError.Code.unauthenticated)
        }
    }

    @Test("without an issuer Konto is no OpenID Provider: every endpoint says so")
    func notProvider() async throws {
        let fixture = try IdentityFixture()
        let token = try await fixture.signUp().session.token
        #expect(try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(token: token, parameters: [], requestedAt: fixture.clock.now)).outcome == .refused)
        #expect(try await fixture.store.openIDToken(IdentityOpenIDTokenRequest(client: Self.native, grantType: "refresh_token")).error?.status == 404)
        #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: token)).error?.status == 404)
        #expect(try await fixture.store.openIDLogout(IdentityOpenIDLogoutRequest(token: token, parameters: [])).outcome == .refused)
    }
}
