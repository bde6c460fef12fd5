import Crypto
import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import Testing

/// The OpenID Provider's clients registered through the admin API (docs/OIDC.md, "Clients through the admin API"):
/// checked as the file's are, served by every endpoint at once, their secrets shown once and kept as SHA-256, rotated
/// with an optional overlap, removed with everything they held; the file's read-only. Over both storages.
@Suite("Identity: OpenID Provider clients through the admin API")
struct IdentityStoreOpenIDClientTests {
    static let bootstrap = OperatorKeyText.generate()
    static let call = IdentityOperatorCall(key: SecretString(bootstrap.text), clientAddress: "192.0.2.7")

    static func fixture(_ storage: any IdentityStorage, maxStoredClients: Int = 100) async throws -> IdentityFixture {
        var options = IdentityOptions()
        var settings = try IdentityStoreOpenIDTests.settings()
        settings.maxStoredClients = maxStoredClients
        options.openID = settings
        options.bootstrapOperatorKey = bootstrap
        let fixture = try IdentityFixture(storage: storage, options: options)
        try await fixture.store.installBootstrapOperatorKey()
        return fixture
    }

    static func crm(_ authentication: String = "client_secret_basic") -> IdentityOpenIDClientSettings {
        IdentityOpenIDClientSettings(
            name: "  CRM  ", type: "confidential", authentication: authentication, redirectURIs: ["https://crm.example.org/cb"],
            postLogoutRedirectURIs: ["https://crm.example.org/bye"], scopes: ["email", "openid", "offline_access", "email"]
        )
    }

    static func create(_ fixture: IdentityFixture, _ id: String, _ settings: IdentityOpenIDClientSettings) async throws -> IdentityOpenIDClientSaved {
        try await fixture.store.createOpenIDClient(IdentityOpenIDClientRequest(operatorCall: call, clientId: id, settings: settings))
    }

    /// Whether the token endpoint's client authentication takes `secret` for `id` (introspection answers
    /// `invalid_client` when it does not).
    static func authenticates(_ fixture: IdentityFixture, _ id: String, secret: String) async throws -> Bool {
        let answer = try await fixture.store.openIDIntrospect(IdentityOpenIDTokenQuery(
            client: IdentityOpenIDClientCredentials(basicId: id, basicSecret: SecretString(secret)), token: SecretString("anything")
        ))
        return answer.error?.error != "invalid_client"
    }

    @Test("registered: checked, its secret shown once and kept as SHA-256, served at once through sign-in, consent and the token endpoint; listed after the file's", arguments: IdentityStorageKind.allCases)
    func register(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage)
            let listed = try await fixture.store.openIDClients(IdentityOpenIDClientsRequest(operatorCall: Self.call))
            #expect(listed.clients.map(\.id) == ["dashboard", "native", "partner"] && listed.clients.allSatisfy { $0.source == .file && $0.createdAt == nil })
            #expect(listed.clients.first?.settings.authentication == "client_secret_basic" && listed.clients.last?.settings.jwks?.count == 1)

            let saved = try await Self.create(fixture, "crm", Self.crm())
            let secret = try #require(saved.secret?.value)
            #expect(secret.hasPrefix("kcs_") && secret.count == 47)
            #expect(saved.client.source == .api && saved.client.settings.name == "CRM" && saved.client.settings.scopes == ["email", "offline_access", "openid"])
            #expect(saved.client.createdAt == fixture.clock.now && saved.client.secretCreatedAt == fixture.clock.now && saved.client.previousSecretExpiresAt == nil)
            let stored = try #require(try await storage.openIDClient(id: "crm"))
            #expect(stored.secretDigest == Array(SHA256.hash(data: Data(secret.utf8))), "only the digest is kept")
            #expect(!String(describing: stored).contains(secret))
            let again = try await fixture.store.openIDClients(IdentityOpenIDClientsRequest(operatorCall: Self.call))
            #expect(again.clients.map(\.id) == ["dashboard", "native", "partner", "crm"] && again.clients.last?.source == .api)

            // Served at once: a third party, so consent, then the code exchange with its secret.
            #expect(try await Self.authenticates(fixture, "crm", secret: secret))
            #expect(try await !Self.authenticates(fixture, "crm", secret: secret + "x"))
            let token = try await fixture.signUp().session.token
            let pkce = IdentityStoreOpenIDTests.PKCE()
            let parameters = IdentityStoreOpenIDTests.parameters(client: "crm", redirect: "https://crm.example.org/cb", pkce: pkce, scope: "openid email offline_access")
            let consent = try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(token: token, parameters: parameters, requestedAt: fixture.clock.now))
            #expect(consent.outcome == .consent && consent.client == IdentityOpenIDClientSummary(id: "crm", name: "CRM"))
            let granted = try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(token: token, parameters: parameters, requestedAt: fixture.clock.now, consentGiven: true))
            let code = try #require(IdentityStoreOpenIDTests.query(granted.location)["code"])
            let exchanged = try await fixture.store.openIDToken(IdentityOpenIDTokenRequest(
                client: IdentityOpenIDClientCredentials(basicId: "crm", basicSecret: SecretString(secret)), grantType: "authorization_code", code: SecretString(code),
                redirectURI: "https://crm.example.org/cb", codeVerifier: SecretString(pkce.verifier)
            ))
            let tokens = try #require(exchanged.tokens, "\(String(describing: exchanged.error))")
            #expect(tokens.refreshToken != nil)
            let applications = try await fixture.store.openIDApplications(IdentitySessionRequest(token: token))
            #expect(applications.applications.map(\.name) == ["CRM"])

            // The audit names the client, never the secret.
            let audited = try await storage.auditEntries(AuditQuery(type: "admin.createOpenIDClient", limit: 10))
            #expect(audited.count == 1 && audited.first?.record.factsText.contains("crm") == true && audited.first?.record.factsText.contains(secret) == false)
        }
    }

    @Test("refusals: every problem named at once, an id taken (the file's or the API's), the limit, a key without clients:write, no OpenID Provider", arguments: IdentityStorageKind.allCases)
    func refusals(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage, maxStoredClients: 2)
            let bad = IdentityOpenIDClientSettings(
                name: "", type: "confidential", authentication: "client_secret_jwt", redirectURIs: ["http://crm.example.org/cb", "https://ok.example.org/cb#frag"],
                postLogoutRedirectURIs: ["javascript:alert(1)"], scopes: ["email", "admin"], idTokenAlgorithm: "RS256", sectorIdentifier: "a/b"
            )
            let refused = await identityError { try await Self.create(fixture, "bad id!", bad) }
            #expect(refused?.code == .adminInvalidRequest)
            for part in ["id:", "name:", "authentication:", "http://crm.example.org/cb", "#frag", "postLogoutRedirectUris:", "must include openid", "\"admin\"", "no RS256 key", "sectorIdentifier:"] {
                #expect(refused?.message.contains(part) == true, "\(part): \(refused?.message ?? "")")
            }
            var publicWithSecret = Self.crm()
            publicWithSecret.type = "public"
            #expect(await identityError { try await Self.create(fixture, "app", publicWithSecret) }?.message.contains("a public client keeps no secret") == true)
            var jwt = Self.crm("private_key_jwt")
            #expect(await identityError { try await Self.create(fixture, "jwt", jwt) }?.message.contains("jwks:") == true)
            jwt.jwks = [IdentityJSONWebKey(kty: "EC", kid: "k1", alg: "ES256", crv: "P-256", x: "AAAA", y: "AAAA")]
            #expect(await identityError { try await Self.create(fixture, "jwt", jwt) }?.message.contains("every key must be a public") == true, "a point not on the curve")
            jwt.jwks = [try #require(try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation).publicKey as IdentityJSONWebKey?)]
            let withKeys = try await Self.create(fixture, "jwt", jwt)
            #expect(withKeys.secret == nil && withKeys.client.settings.jwks?.count == 1)
            #expect(try await storage.openIDClients().isEmpty == false)

            #expect(await identityError { try await Self.create(fixture, "dashboard", Self.crm()) }?.code == .adminClientExists, "the file's id")
            _ = try await Self.create(fixture, "crm", Self.crm())
            #expect(await identityError { try await Self.create(fixture, "crm", Self.crm()) }?.code == .adminClientExists)
            #expect(await identityError { try await Self.create(fixture, "third", Self.crm()) }?.code == .adminClientLimit)
            #expect(try await Set(storage.openIDClients().map(\.id)) == ["jwt", "crm"], "nothing refused was stored")

            let reader = try await fixture.store.createOperatorKey(IdentityCreateOperatorKeyRequest(operatorCall: Self.call, name: "reader", scopes: [.accountsRead]))
            let readerCall = IdentityOperatorCall(key: SecretString(reader.secret.value))
            #expect(await identityError { try await fixture.store.openIDClients(IdentityOpenIDClientsRequest(operatorCall: readerCall)) }?.code == .adminScopeMissing)
            #expect(await identityError {
                try await fixture.store.removeOpenIDClient(IdentityOpenIDClientIdRequest(operatorCall: readerCall, clientId: "crm"))
            }?.code == .adminScopeMissing)
            #expect(try await storage.openIDClient(id: "crm") != nil)
            let refusedAudit = try await storage.auditEntries(AuditQuery(type: "admin.removeOpenIDClient", limit: 10))
            #expect(refusedAudit.first?.record.factsText.contains("admin.scopeMissing") == true)

            // No OpenID Provider: said so.
            var options = IdentityOptions()
            options.bootstrapOperatorKey = Self.bootstrap
            let plain = try IdentityFixture(storage: storage, options: options)
            let off = await identityError { try await plain.store.openIDClients(IdentityOpenIDClientsRequest(operatorCall: Self.call)) }
            #expect(off?.code == .adminInvalidRequest && off?.message.contains("KONTO_IDENTITY_OIDC_ISSUER") == true)
        }
    }

    @Test("changed: new redirect URIs and scopes hold at once; the type and kind of proof stay; the file's are read-only", arguments: IdentityStorageKind.allCases)
    func update(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage)
            let secret = try #require(try await Self.create(fixture, "crm", Self.crm()).secret?.value)
            fixture.clock.advance(by: .seconds(30))
            var changed = Self.crm("client_secret_post")
            changed.redirectURIs = ["https://crm.example.org/new"]
            changed.name = "CRM 2"
            let updated = try await fixture.store.updateOpenIDClient(IdentityOpenIDClientRequest(operatorCall: Self.call, clientId: "crm", settings: changed))
            #expect(updated.settings.name == "CRM 2" && updated.settings.authentication == "client_secret_post" && updated.updatedAt == fixture.clock.now)
            #expect(updated.createdAt != updated.updatedAt)
            // The secret stays; it now goes in the form (client_secret_post), Basic is refused.
            let post = try await fixture.store.openIDIntrospect(IdentityOpenIDTokenQuery(
                client: IdentityOpenIDClientCredentials(clientId: "crm", clientSecret: SecretString(secret)), token: SecretString("anything")
            ))
            #expect(post.error == nil)
            #expect(try await !Self.authenticates(fixture, "crm", secret: secret))
            // The old redirect URI is refused on Konto's page.
            let token = try await fixture.signUp().session.token
            let old = IdentityStoreOpenIDTests.parameters(client: "crm", redirect: "https://crm.example.org/cb", pkce: IdentityStoreOpenIDTests.PKCE())
            #expect(try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(token: token, parameters: old, requestedAt: fixture.clock.now)).outcome == .refused)

            var toPublic = changed
            toPublic.type = "public"
            toPublic.authentication = nil
            #expect(await identityError {
                try await fixture.store.updateOpenIDClient(IdentityOpenIDClientRequest(operatorCall: Self.call, clientId: "crm", settings: toPublic))
            }?.message.contains("stay as registered") == true)
            var toJWT = changed
            toJWT.authentication = "private_key_jwt"
            toJWT.jwks = [try #require(try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation).publicKey as IdentityJSONWebKey?)]
            #expect(await identityError {
                try await fixture.store.updateOpenIDClient(IdentityOpenIDClientRequest(operatorCall: Self.call, clientId: "crm", settings: toJWT))
            }?.code == .adminInvalidRequest)
            #expect(await identityError {
                try await fixture.store.updateOpenIDClient(IdentityOpenIDClientRequest(operatorCall: Self.call, clientId: "dashboard", settings: changed))
            }?.code == .adminClientInFile)
            #expect(await identityError {
                try await fixture.store.updateOpenIDClient(IdentityOpenIDClientRequest(operatorCall: Self.call, clientId: "nobody", settings: changed))
            }?.code == .adminClientNotFound)
            #expect(try await storage.openIDClient(id: "crm")?.settings.name == "CRM 2")
        }
    }

    @Test("first-party is the deployment's: a key with clients:write alone registers, changes and rotates no first-party client; a change of redirect URIs, scopes or first-party ends the consents (asked again), audited with what changed", arguments: IdentityStorageKind.allCases)
    func firstPartyAndConsents(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage)
            let writer = try await fixture.store.createOperatorKey(IdentityCreateOperatorKeyRequest(operatorCall: Self.call, name: "clients", scopes: [.clientsWrite]))
            let narrow = IdentityOperatorCall(key: SecretString(writer.secret.value), clientAddress: "192.0.2.8")
            func request(_ id: String, _ settings: IdentityOpenIDClientSettings, _ call: IdentityOperatorCall = narrow) -> IdentityOpenIDClientRequest {
                IdentityOpenIDClientRequest(operatorCall: call, clientId: id, settings: settings)
            }
            var trusted = Self.crm()
            trusted.firstParty = true
            // Registering a first-party client, making one first-party, changing or rotating one: refused to the narrow key.
            #expect(await identityError { try await fixture.store.createOpenIDClient(request("harvest", trusted)) }?.code == .adminScopeMissing)
            #expect(try await storage.openIDClient(id: "harvest") == nil)
            _ = try await fixture.store.createOpenIDClient(request("crm", Self.crm()))
            #expect(await identityError { try await fixture.store.updateOpenIDClient(request("crm", trusted)) }?.code == .adminScopeMissing)
            _ = try await fixture.store.createOpenIDClient(request("portal", trusted, Self.call))
            var stolen = trusted
            stolen.redirectURIs = ["https://attacker.example.net/cb"]
            stolen.firstParty = false
            #expect(await identityError { try await fixture.store.updateOpenIDClient(request("portal", stolen)) }?.code == .adminScopeMissing)
            #expect(await identityError {
                try await fixture.store.rotateOpenIDClientSecret(IdentityRotateOpenIDClientSecretRequest(operatorCall: narrow, clientId: "portal", keepPreviousSeconds: 604_800))
            }?.code == .adminScopeMissing)
            #expect(try await storage.openIDClient(id: "portal")?.settings.redirectURIs == ["https://crm.example.org/cb"])
            // The narrow key's own third-party client rotates.
            #expect(try await fixture.store.rotateOpenIDClientSecret(IdentityRotateOpenIDClientSecretRequest(operatorCall: narrow, clientId: "crm")).secret != nil)

            // A consent to crm; a change of its name keeps it, of its redirect URIs ends it: the next request asks again.
            let token = try await fixture.signUp().session.token
            func authorize(_ redirect: String, consentGiven: Bool = false) async throws -> IdentityOpenIDAuthorization {
                let parameters = IdentityStoreOpenIDTests.parameters(client: "crm", redirect: redirect, pkce: IdentityStoreOpenIDTests.PKCE(), scope: "openid email")
                return try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(token: token, parameters: parameters, requestedAt: fixture.clock.now, consentGiven: consentGiven))
            }
            #expect(try await authorize("https://crm.example.org/cb", consentGiven: true).outcome == .redirect)
            #expect(try await authorize("https://crm.example.org/cb").outcome == .redirect, "remembered")
            var renamed = Self.crm()
            renamed.name = "CRM renamed"
            _ = try await fixture.store.updateOpenIDClient(request("crm", renamed))
            #expect(try await authorize("https://crm.example.org/cb").outcome == .redirect, "a new name asks nothing again")
            var moved = renamed
            moved.redirectURIs = ["https://crm.example.org/cb", "https://elsewhere.example.net/cb"]
            _ = try await fixture.store.updateOpenIDClient(request("crm", moved))
            #expect(try await authorize("https://elsewhere.example.net/cb").outcome == .consent, "asked again after the redirect URIs changed")
            #expect(try await authorize("https://crm.example.org/cb").outcome == .consent)
            #expect(try await authorize("https://crm.example.org/cb", consentGiven: true).outcome == .redirect)
            var widened = moved
            widened.scopes = ["openid", "email", "profile"]
            _ = try await fixture.store.updateOpenIDClient(request("crm", widened))
            #expect(try await authorize("https://crm.example.org/cb").outcome == .consent, "asked again after the scopes changed")

            let audited = try await storage.auditEntries(AuditQuery(type: "admin.updateOpenIDClient", limit: 20)).map(\.record.factsText)
            #expect(audited.contains { $0.contains("redirectUris") && $0.contains("consentsEnded") }, "\(audited)")
            #expect(audited.contains { $0.contains("scopes") }, "\(audited)")
            #expect(audited.filter { $0.contains("admin.scopeMissing") }.count == 2, "\(audited)")
        }
    }

    @Test("rotated: the new secret shown once; the previous refused at once, or accepted until the overlap ends", arguments: IdentityStorageKind.allCases)
    func rotate(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage)
            let first = try #require(try await Self.create(fixture, "crm", Self.crm()).secret?.value)
            let rotated = try await fixture.store.rotateOpenIDClientSecret(IdentityRotateOpenIDClientSecretRequest(operatorCall: Self.call, clientId: "crm"))
            let second = try #require(rotated.secret?.value)
            #expect(second != first && rotated.client.previousSecretExpiresAt == nil)
            #expect(try await !Self.authenticates(fixture, "crm", secret: first))
            #expect(try await Self.authenticates(fixture, "crm", secret: second))

            let overlapping = try await fixture.store.rotateOpenIDClientSecret(IdentityRotateOpenIDClientSecretRequest(operatorCall: Self.call, clientId: "crm", keepPreviousSeconds: 3_600))
            let third = try #require(overlapping.secret?.value)
            #expect(overlapping.client.previousSecretExpiresAt == fixture.clock.now.adding(.seconds(3_600)))
            #expect(try await Self.authenticates(fixture, "crm", secret: second))
            #expect(try await Self.authenticates(fixture, "crm", secret: third))
            #expect(try await !Self.authenticates(fixture, "crm", secret: first))
            fixture.clock.advance(by: .seconds(3_601))
            #expect(try await !Self.authenticates(fixture, "crm", secret: second), "the overlap ended")
            #expect(try await Self.authenticates(fixture, "crm", secret: third))
            let listed = try await fixture.store.openIDClients(IdentityOpenIDClientsRequest(operatorCall: Self.call))
            #expect(listed.clients.last?.previousSecretExpiresAt == nil, "a lapsed overlap is not listed")

            var app = Self.crm()
            app.type = "public"
            app.authentication = nil
            _ = try await Self.create(fixture, "app", app)
            func rotation(_ id: String, keep: Int = 0) async -> ServiceError? {
                await identityError {
                    try await fixture.store.rotateOpenIDClientSecret(IdentityRotateOpenIDClientSecretRequest(operatorCall: Self.call, clientId: id, keepPreviousSeconds: keep))
                }
            }
            #expect(await rotation("app")?.message.contains("nothing to rotate") == true)
            #expect(await rotation("dashboard")?.code == .adminClientInFile)
            #expect(await rotation("nobody")?.code == .adminClientNotFound)
            #expect(await rotation("crm", keep: 8 * 24 * 3_600)?.code == .adminInvalidRequest)
            #expect(await rotation("crm", keep: -1)?.code == .adminInvalidRequest)
            #expect(try await Self.authenticates(fixture, "crm", secret: third), "a refused rotation changes nothing")
        }
    }

    @Test("removed: every account's codes, grants and consents for it end with it; its tokens stop working; the file's stay", arguments: IdentityStorageKind.allCases)
    func remove(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage)
            let secret = try #require(try await Self.create(fixture, "crm", Self.crm()).secret?.value)
            let credentials = IdentityOpenIDClientCredentials(basicId: "crm", basicSecret: SecretString(secret))
            var refreshTokens: [String] = []
            var accessTokens: [String] = []
            var pending: String?
            for (index, userId) in ["ada@example.org", "grace@example.org"].enumerated() {
                let token = try await fixture.signUp(userId).session.token
                let pkce = IdentityStoreOpenIDTests.PKCE()
                let parameters = IdentityStoreOpenIDTests.parameters(client: "crm", redirect: "https://crm.example.org/cb", pkce: pkce, scope: "openid email offline_access")
                let granted = try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(token: token, parameters: parameters, requestedAt: fixture.clock.now, consentGiven: true))
                let code = try #require(IdentityStoreOpenIDTests.query(granted.location)["code"])
                if index == 1 {
                    // A second code left unexchanged: it must not outlive the client either.
                    let another = try await fixture.store.openIDAuthorize(IdentityOpenIDAuthorizeRequest(token: token, parameters: parameters, requestedAt: fixture.clock.now))
                    pending = IdentityStoreOpenIDTests.query(another.location)["code"]
                }
                let tokens = try #require(try await fixture.store.openIDToken(IdentityOpenIDTokenRequest(
                    client: credentials, grantType: "authorization_code", code: SecretString(code), redirectURI: "https://crm.example.org/cb", codeVerifier: SecretString(pkce.verifier)
                )).tokens)
                refreshTokens.append(try #require(tokens.refreshToken?.value))
                accessTokens.append(tokens.accessToken.value)
            }
            // The file's client keeps its grant.
            let own = try await fixture.signUp("linus@example.org").session.token
            let dashboard = try await IdentityStoreOpenIDTests.signIn(fixture, token: own)
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: BearerToken(accessTokens[0]))).accountId != nil)

            let removed = try await fixture.store.removeOpenIDClient(IdentityOpenIDClientIdRequest(operatorCall: Self.call, clientId: "crm"))
            #expect(removed == IdentityOpenIDClientRemoved(grantsEnded: 2, consentsRemoved: 2))
            for access in accessTokens {
                #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: BearerToken(access))).accountId == nil)
            }
            for refresh in refreshTokens {
                #expect(try await storage.openIDGrant(currentRefreshTokenHash: SecretToken.hash(refresh), at: fixture.clock.now) == nil)
            }
            #expect(try await !Self.authenticates(fixture, "crm", secret: secret))
            let code = try #require(pending)
            #expect(try await storage.redeemAuthorizationCode(codeHash: SecretToken.hash(code), at: fixture.clock.now) { _ in nil } == .unknown)
            #expect(try await fixture.store.openIDAccessToken(IdentityOpenIDAccessTokenRequest(token: dashboard.accessToken)).accountId != nil, "another client's grant stays")

            // Registered again under the same id: a new client, nothing of the old one's.
            _ = try await Self.create(fixture, "crm", Self.crm())
            let ownAccount = try await fixture.validate(own).accountId
            #expect(try await storage.openIDConsents(accountId: ownAccount).isEmpty)
            #expect(await identityError {
                try await fixture.store.removeOpenIDClient(IdentityOpenIDClientIdRequest(operatorCall: Self.call, clientId: "dashboard"))
            }?.code == .adminClientInFile)
            #expect(await identityError {
                try await fixture.store.removeOpenIDClient(IdentityOpenIDClientIdRequest(operatorCall: Self.call, clientId: "nobody"))
            }?.code == .adminClientNotFound)
        }
    }

    @Test("races: registrations from many tasks at once stop at the limit exactly; rotations at once leave one current secret", arguments: IdentityStorageKind.allCases)
    func races(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage, maxStoredClients: 5)
            for round in 0..<3 {
                let outcomes = try await withThrowingTaskGroup(of: KontoErrorCode?.self) { group in
                    for index in 0..<12 {
                        group.addTask { await identityError { try await Self.create(fixture, "r\(round)-\(index)", Self.crm()) }?.code }
                    }
                    return try await group.reduce(into: [KontoErrorCode?]()) { $0.append($1) }
                }
                #expect(outcomes.filter { $0 == nil }.count == (round == 0 ? 5 : 0) && outcomes.compactMap { $0 }.allSatisfy { $0 == .adminClientLimit }, "round \(round)")
            }
            #expect(try await storage.openIDClients().count == 5)
            let id = try #require(try await storage.openIDClients().first?.id)
            for round in 0..<5 {
                let secrets = try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<6 {
                        group.addTask { try await fixture.store.rotateOpenIDClientSecret(IdentityRotateOpenIDClientSecretRequest(operatorCall: Self.call, clientId: id)).secret?.value }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1 ?? "") }
                }
                var accepted = 0
                for secret in secrets where try await Self.authenticates(fixture, id, secret: secret) { accepted += 1 }
                #expect(Set(secrets).count == 6 && accepted == 1, "round \(round)")
            }
        }
    }
}
