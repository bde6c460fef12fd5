import Crypto
import Foundation
import JWTKit
import KontoContracts
import KontoModel
import Logging

/// Konto as an OpenID Provider (docs/OIDC.md): the authorization decisions, codes, tokens, refresh-token rotation,
/// revocation and introspection, over the ``OpenIDStorage`` and the console's sessions. The gateway serves the
/// endpoints; what they decide is decided here, where sessions, credentials and the signing keys are.
struct OpenIDProvider: IdentityPart {
    let context: IdentityContext
    let storage: any IdentityStorage
    let sessions: SessionAuthority
    /// Nil where Konto is no OpenID Provider: every endpoint answers so.
    let settings: OpenIDProviderSettings?
    /// Built once (adding keys to a key collection is asynchronous); nil with ``settings``.
    let issuer: Task<OpenIDTokenIssuer, Never>?

    /// How long a used code is remembered, so a second use is recognised and revokes what the first gave.
    static let usedCodeMemory: Duration = .seconds(10 * 60)

    init(context: IdentityContext, storage: any IdentityStorage, sessions: SessionAuthority, pairwiseKey: SymmetricKey) {
        self.context = context
        self.storage = storage
        self.sessions = sessions
        self.settings = context.options.openID
        self.issuer = context.options.openID.map { settings in Task { await OpenIDTokenIssuer(settings: settings, pairwiseKey: pairwiseKey) } }
    }

    static let notProvider = IdentityOpenIDError("invalid_request", "Konto is no OpenID Provider here.", status: 404)

    // MARK: Clients

    static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// The longest client assertion read (a JWT with a few claims is well under 1 KiB; an RSA-4096 signature adds 700
    /// characters).
    static let maximumAssertionLength = 8_192

    /// What every client authentication failure answers: `invalid_client` (401), saying no more.
    static let invalidClient = IdentityOpenIDError("invalid_client", "Client authentication failed.", status: 401)

    /// The client a token, revocation or introspection request comes from, proved as it registered: a confidential
    /// client with its secret (by the method it registered) or a `private_key_jwt` assertion; a public one by its id
    /// alone, presenting no secret. Nil for any failure (``invalidClient``); a storage failure looking the client up is
    /// thrown.
    func authenticate(_ credentials: IdentityOpenIDClientCredentials, settings: OpenIDProviderSettings, at now: Timestamp) async throws(ServiceError) -> OpenIDClient? {
        guard let id = Self.presentedClientId(credentials), let client = try await registeredClient(id, settings: settings, at: now),
              await proves(credentials, client: client, settings: settings, at: now)
        else { return nil }
        return client
    }

    /// The one client id a request names (by Basic, the form, or a client assertion's `iss`), unchecked: one id, or the
    /// same twice (RFC 6749 2.3: one method per request; a form's client_id may repeat Basic's). Nil for none, several
    /// that differ, or an assertion of another type or too long (and an assertion type without an assertion).
    static func presentedClientId(_ credentials: IdentityOpenIDClientCredentials) -> String? {
        let ids = [credentials.basicId, credentials.clientId].compactMap { $0 }
        var assertionIssuer: String?
        if let assertion = credentials.assertion {
            guard credentials.assertionType == assertionType, assertion.value.utf8.count <= maximumAssertionLength else { return nil }
            assertionIssuer = unverifiedIssuer(assertion.value)
        } else if credentials.assertionType != nil {
            return nil
        }
        guard let id = ids.first ?? assertionIssuer, ids.allSatisfy({ $0 == id }) else { return nil }
        return id
    }

    /// Whether the request proves it is `client`, by the one method the client registered.
    private func proves(_ credentials: IdentityOpenIDClientCredentials, client: OpenIDClient, settings: OpenIDProviderSettings, at now: Timestamp) async -> Bool {
        let secrets = [credentials.basicId != nil ? "basic" : nil, credentials.clientSecret != nil ? "post" : nil, credentials.assertion != nil ? "jwt" : nil].compactMap { $0 }
        guard secrets.count <= 1 else { return false }
        switch client.authentication {
        case .none:
            return secrets.isEmpty || (secrets == ["basic"] && (credentials.basicSecret?.value ?? "").isEmpty)
        case .secret(let method, _):
            let given: SecretString?
            switch method {
            case "client_secret_basic": given = secrets == ["basic"] ? credentials.basicSecret : nil
            default: given = secrets == ["post"] ? credentials.clientSecret : nil
            }
            guard let given else { return false }
            return client.accepts(secret: given.value)
        case .privateKeyJWT(let keys):
            guard secrets == ["jwt"], let assertion = credentials.assertion else { return false }
            return await verifyAssertion(assertion.value, client: client, keys: keys, settings: settings, at: now)
        }
    }

    /// RFC 7523 3 and OpenID Connect Core 9: signed by one of the client's keys, `iss` and `sub` its id, `aud` the
    /// token endpoint or the issuer, unexpired (and not for longer than five minutes more), its `jti` not seen before.
    func verifyAssertion(_ assertion: String, client: OpenIDClient, keys: [IdentityJSONWebKey], settings: OpenIDProviderSettings, at now: Timestamp) async -> Bool {
        let collection = JWTKeyCollection()
        let encoder = JSONEncoder()
        for key in keys {
            guard let data = try? encoder.encode(key), let jwk = try? JSONDecoder().decode(JWK.self, from: data) else { continue }
            _ = try? await collection.add(jwk: jwk)
        }
        guard let claims = try? await collection.verify(assertion, as: ClientAssertionClaims.self) else { return false }
        let nowDate = now.date
        let audiences = [settings.issuer, settings.issuer + "/oauth2/token"]
        guard claims.iss.value == client.id, claims.sub.value == client.id,
              claims.aud.value.contains(where: audiences.contains),
              claims.exp.value > nowDate, claims.exp.value <= nowDate.addingTimeInterval(5 * 60 + 30),
              let jti = claims.jti?.value, !jti.isEmpty, jti.utf8.count <= 256
        else { return false }
        // Once only: its digest remembered until it expires.
        let digest = Array(SHA256.hash(data: Data("client-assertion\u{0}\(client.id)\u{0}\(jti)".utf8)))
        return (try? await storage.useNonce(digest: digest, expiresAt: Timestamp(claims.exp.value))) ?? false
    }

    /// The `iss` of a client assertion before its signature is checked: only to find whose keys to check it with.
    static func unverifiedIssuer(_ assertion: String) -> String? {
        (try? DefaultJWTParser().parse(Array(assertion.utf8), as: ClientAssertionClaims.self))?.payload.iss.value
    }

    // MARK: Tokens

    /// RFC 8176's `amr` for how the session signed in, `mfa` added at the second assurance level.
    static func methods(signInMethod: String?, assuranceLevel: Int) -> [String] {
        var methods: [String]
        switch signInMethod {
        // A password given to sign in, or chosen to sign up.
        case "password", "signUp": methods = ["pwd"]
        // A code mailed for this sign-in is a one-time password.
        case "emailCode": methods = ["otp"]
        case "passkey": methods = ["hwk", "user"]
        // A first factor, then a code or a passkey: more than one factor.
        case "secondFactor": methods = ["mfa"]
        // An external provider vouched: RFC 8176 registers no value for it; `fed` is what Microsoft's and others'
        // providers write.
        case let method? where method.hasPrefix("provider:"): methods = ["fed"]
        default: methods = []
        }
        if assuranceLevel >= 2, !methods.contains("mfa") { methods.append("mfa") }
        return methods
    }

    /// The tokens for a grant just made or refreshed: an access token (RFC 9068), an ID token (with the code's
    /// nonce), and the refresh token when one was made.
    func tokens(
        for grant: StoredOpenIDGrant, client: OpenIDClient, nonce: String?, refreshToken: String?, at now: Timestamp
    ) async throws(ServiceError) -> IdentityOpenIDTokens {
        guard let issuer, let settings else { throw .identityStorageFailure }
        let issuerValue = await issuer.value
        do {
            let accessToken = try await issuerValue.accessToken(
                OpenIDTokenIssuer.Access(grantId: grant.id, accountId: grant.accountId, client: client, scopes: grant.scopes, authTime: grant.authTime.date,
                                         assuranceLevel: grant.assuranceLevel, issuedAt: now.date, lifetime: settings.accessTokenLifetime)
            )
            let idToken = try await issuerValue.idToken(
                OpenIDTokenIssuer.Sign(accountId: grant.accountId, client: client, authTime: grant.authTime.date, nonce: nonce,
                                       assuranceLevel: grant.assuranceLevel, methods: Self.methods(signInMethod: grant.signInMethod, assuranceLevel: grant.assuranceLevel),
                                       issuedAt: now.date)
            )
            return IdentityOpenIDTokens(
                accessToken: BearerToken(accessToken), expiresIn: Int(settings.accessTokenLifetime.components.seconds), refreshToken: refreshToken.map(BearerToken.init),
                idToken: idToken, scope: grant.scopes.joined(separator: " ")
            )
        } catch {
            logger.error("OpenID token not signed", metadata: ["konto.client_id": "\(client.id)"])
            throw .identityStorageFailure
        }
    }

    /// An audit entry of the OpenID Provider's, with the client named.
    func record(_ type: String, accountId: String, actor: AuditActorType, clientId: String, at now: Timestamp, facts: [String: String] = [:]) -> AuditRecord {
        let scope = AuditScope.current
        return AuditRecord(
            occurredAt: now, accountId: accountId, actorType: actor, actorId: actor == .account ? accountId : nil, type: type, operation: scope?.operation,
            facts: facts.merging(["clientId": clientId]) { first, _ in first }, personal: scope?.personal
        )
    }
}

/// A `private_key_jwt` client assertion's claims (RFC 7523 3); checked by ``OpenIDProvider/verifyAssertion``.
struct ClientAssertionClaims: JWTPayload {
    var iss: IssuerClaim
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var jti: IDClaim?

    func verify(using algorithm: some JWTAlgorithm) throws {}
}
