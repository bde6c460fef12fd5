import Crypto
import Foundation
import JWTKit
import KontoContracts
import KontoModel
import Logging

/// The clients: the deployment's file's (fixed at start, changed only there) and those an operator registers through
/// the admin API (docs/OIDC.md, "Clients through the admin API"), stored and read by every replica on each request
/// that names one, so a change or a removal holds everywhere at once. A file client's id wins over a stored one's.
extension OpenIDProvider {
    /// The client with this id, as every endpoint sees it: the file's, else the stored one (its previous secret only
    /// while the rotation's overlap lasts).
    func registeredClient(_ id: String, settings: OpenIDProviderSettings, at now: Timestamp) async throws(ServiceError) -> OpenIDClient? {
        if let client = settings.clients[id] { return client }
        guard OpenIDClientsLoader.isClientId(id) else { return nil }
        let stored = try await stored { () async throws(IdentityStorageError) in try await storage.openIDClient(id: id) }
        guard let stored, let client = Self.client(stored, at: now) else { return nil }
        // A key the deployment no longer has (an RS256 key removed): the client cannot be given tokens.
        guard settings.keys.signing(client.idTokenAlgorithm) != nil else {
            logger.warning("OpenID client's ID token algorithm has no key", metadata: ["konto.client_id": "\(id)"])
            return nil
        }
        return client
    }

    /// A stored client as the endpoints use it; nil for settings that no longer make one (never written so).
    static func client(_ stored: StoredOpenIDClient, at now: Timestamp) -> OpenIDClient? {
        let settings = stored.settings
        let authentication: OpenIDClient.Authentication
        switch (settings.type, settings.authentication) {
        case ("public", nil):
            authentication = .none
        case ("confidential", let method?) where OpenIDClient.secretMethods.contains(method):
            guard let digest = stored.secretDigest else { return nil }
            authentication = .secret(method: method, digest: digest)
        case ("confidential", "private_key_jwt"):
            authentication = .privateKeyJWT(keys: settings.jwks ?? [])
        default:
            return nil
        }
        var client = OpenIDClient(
            id: stored.id, name: settings.name, authentication: authentication, redirectURIs: settings.redirectURIs,
            postLogoutRedirectURIs: settings.postLogoutRedirectURIs, scopes: Set(settings.scopes), isFirstParty: settings.firstParty,
            idTokenAlgorithm: settings.idTokenAlgorithm, sectorIdentifier: settings.sectorIdentifier
        )
        if let previous = stored.previousSecretDigest, let until = stored.previousSecretExpiresAt, now < until {
            client.previousSecretDigest = previous
        }
        client.source = .api
        return client
    }

    // MARK: The admin API

    private static func refused(_ message: String) -> ServiceError { ServiceError(code: .adminInvalidRequest, message: message) }
    private static func notFound(_ id: String) -> ServiceError { ServiceError(code: .adminClientNotFound, message: "No OpenID Provider client has the id \"\(id.prefix(128))\".") }
    private static func inFile(_ id: String) -> ServiceError {
        ServiceError(code: .adminClientInFile, message: "Client \"\(id)\" is the clients file's (KONTO_IDENTITY_OIDC_CLIENTS): change it there.")
    }

    /// A first-party client (no consent page) is the deployment's to trust: its clients file, or a key that also holds
    /// clients:firstParty.
    private static func firstPartyRefused(_ id: String) -> ServiceError {
        ServiceError(
            code: .adminScopeMissing,
            message: "Client \"\(id.prefix(128))\" is or would be first-party (no consent page): that needs the scope clients:firstParty beside clients:write."
        )
    }

    private func providerSettings() throws(ServiceError) -> OpenIDProviderSettings {
        guard let settings else { throw Self.refused("Konto is no OpenID Provider here: set KONTO_IDENTITY_OIDC_ISSUER (docs/OIDC.md).") }
        return settings
    }

    /// ``IdentityContract/openIDClients``: the file's, by id, then the stored ones, oldest first (one a file client's
    /// id hides is not listed: it is not served).
    func clients() async throws(ServiceError) -> IdentityOpenIDClientList {
        let settings = try providerSettings()
        let stored = try await stored { () async throws(IdentityStorageError) in try await storage.openIDClients() }
        let file = settings.clients.clients.values.sorted { $0.id < $1.id }.map { IdentityOpenIDClientInfo(id: $0.id, source: .file, settings: Self.settings(of: $0)) }
        let now = clock()
        let api = stored.filter { settings.clients[$0.id] == nil }.map { Self.info($0, at: now) }
        return IdentityOpenIDClientList(clients: file + api)
    }

    /// ``IdentityContract/createOpenIDClient``: checked as the clients file's entries are, its secret (a secret
    /// client's) made here and kept as SHA-256.
    func createClient(_ request: IdentityOpenIDClientRequest, by key: StoredOperatorKey) async throws(ServiceError) -> IdentityOpenIDClientSaved {
        let settings = try providerSettings()
        let checked = try await Self.checked(request.settings, clientId: request.clientId, keys: settings.keys)
        if checked.firstParty, !key.scopes.contains(.clientsFirstParty) { throw Self.firstPartyRefused(request.clientId) }
        guard settings.clients[request.clientId] == nil else {
            throw ServiceError(code: .adminClientExists, message: "Client \"\(request.clientId)\" exists already (the clients file's).")
        }
        let now = clock()
        let secret = Self.usesSecret(checked) ? Self.makeSecret() : nil
        let client = StoredOpenIDClient(
            id: request.clientId, settings: checked, secretDigest: secret.map(SecretToken.hash), secretCreatedAt: secret == nil ? nil : now,
            createdAt: now, updatedAt: now
        )
        let limit = settings.maxStoredClients
        let creation = try await stored { () async throws(IdentityStorageError) in try await storage.createOpenIDClient(client, limit: limit) }
        switch creation {
        case .created: break
        case .idTaken: throw ServiceError(code: .adminClientExists, message: "Client \"\(request.clientId)\" exists already.")
        case .limitReached:
            throw ServiceError(code: .adminClientLimit, message: "\(limit) clients are registered through the admin API, as many as this deployment allows (KONTO_IDENTITY_OIDC_CLIENTS_MAX): remove one first.")
        }
        logger.info("OpenID client registered", metadata: ["konto.client_id": "\(request.clientId)"])
        return IdentityOpenIDClientSaved(client: Self.info(client, at: now), secret: secret.map(BearerToken.init))
    }

    /// ``IdentityContract/updateOpenIDClient``: new settings for a stored client, its type and kind of authentication
    /// kept (a secret client may move between `client_secret_basic` and `client_secret_post`). Codes and grants stay;
    /// a redirect URI removed is refused from the next request on, a scope removed is not given again. A change of the
    /// redirect URIs, the scopes or first-party ends the client's consents in the same step, so each person is asked
    /// again; the audit entry names what changed.
    func updateClient(_ request: IdentityOpenIDClientRequest, by key: StoredOperatorKey) async throws(ServiceError) -> IdentityOpenIDClientInfo {
        let settings = try providerSettings()
        if settings.clients[request.clientId] != nil { throw Self.inFile(request.clientId) }
        let checked = try await Self.checked(request.settings, clientId: request.clientId, keys: settings.keys)
        let id = request.clientId
        guard let current = try await stored({ () async throws(IdentityStorageError) in try await storage.openIDClient(id: id) }) else { throw Self.notFound(id) }
        // The type and the kind of proof never change in place: the secret (or its absence) goes with them.
        guard current.settings.type == checked.type, Self.usesSecret(current.settings) == Self.usesSecret(checked),
              (current.settings.authentication == "private_key_jwt") == (checked.authentication == "private_key_jwt")
        else {
            throw Self.refused("type and authentication: a client's type and kind of authentication (secret or private_key_jwt) stay as registered; register a new client for another")
        }
        let now = clock()
        let trusted = key.scopes.contains(.clientsFirstParty)
        if checked.firstParty, !trusted { throw Self.firstPartyRefused(id) }
        let outcome = try await stored { () async throws(IdentityStorageError) in
            try await storage.updateOpenIDClient(id: id, settings: checked, mayChangeFirstParty: trusted, at: now)
        }
        switch outcome {
        case .notFound: throw Self.notFound(id)
        case .firstPartyRefused: throw Self.firstPartyRefused(id)
        case .updated(let updated, let changed, let ended):
            AuditScope.current?.note(["changed": changed.isEmpty ? "none" : changed.joined(separator: ","), "consentsEnded": "\(ended)"])
            logger.info("OpenID client changed", metadata: ["konto.client_id": "\(id)", "konto.count": "\(ended)"])
            return Self.info(updated, at: now)
        }
    }

    /// ``IdentityContract/rotateOpenIDClientSecret``: a new secret, shown once; the previous one accepted for the
    /// overlap asked for (none: refused from now on).
    func rotateClientSecret(_ request: IdentityRotateOpenIDClientSecretRequest, by key: StoredOperatorKey) async throws(ServiceError) -> IdentityOpenIDClientSaved {
        let settings = try providerSettings()
        let id = request.clientId
        if settings.clients[id] != nil { throw Self.inFile(id) }
        guard (0...IdentityRotateOpenIDClientSecretRequest.maximumOverlapSeconds).contains(request.keepPreviousSeconds) else {
            throw Self.refused("keepPreviousSeconds: from 0 to \(IdentityRotateOpenIDClientSecretRequest.maximumOverlapSeconds) (seven days)")
        }
        guard OpenIDClientsLoader.isClientId(id) else { throw Self.notFound(id) }
        let now = clock()
        let secret = Self.makeSecret()
        let until = request.keepPreviousSeconds > 0 ? now.adding(.seconds(request.keepPreviousSeconds)) : nil
        let trusted = key.scopes.contains(.clientsFirstParty)
        let rotated = try await stored { () async throws(IdentityStorageError) in
            try await storage.rotateOpenIDClientSecret(id: id, digest: SecretToken.hash(secret), previousExpiresAt: until, mayChangeFirstParty: trusted, at: now)
        }
        guard let rotated else {
            guard let current = try await stored({ () async throws(IdentityStorageError) in try await storage.openIDClient(id: id) }) else { throw Self.notFound(id) }
            if current.settings.firstParty, !trusted, current.secretDigest != nil { throw Self.firstPartyRefused(id) }
            throw Self.refused("The client keeps no secret (a public client, or private_key_jwt): there is nothing to rotate.")
        }
        AuditScope.current?.note(["keepPreviousSeconds": "\(request.keepPreviousSeconds)"])
        logger.info("OpenID client secret rotated", metadata: ["konto.client_id": "\(id)"])
        return IdentityOpenIDClientSaved(client: Self.info(rotated, at: now), secret: BearerToken(secret))
    }

    /// ``IdentityContract/removeOpenIDClient``: the client, and with it every account's codes, grants (their refresh
    /// tokens; the access tokens Konto's API checks against the grant) and consents for it.
    func removeClient(_ request: IdentityOpenIDClientIdRequest) async throws(ServiceError) -> IdentityOpenIDClientRemoved {
        let settings = try providerSettings()
        let id = request.clientId
        if settings.clients[id] != nil { throw Self.inFile(id) }
        guard OpenIDClientsLoader.isClientId(id) else { throw Self.notFound(id) }
        let removed = try await stored { () async throws(IdentityStorageError) in try await storage.removeOpenIDClient(id: id) }
        guard let removed else { throw Self.notFound(id) }
        logger.info("OpenID client removed", metadata: ["konto.client_id": "\(id)", "konto.count": "\(removed.grantsEnded)"])
        return removed
    }

    // MARK: Checks

    private static func usesSecret(_ settings: IdentityOpenIDClientSettings) -> Bool {
        settings.type == "confidential" && settings.authentication.map(OpenIDClient.secretMethods.contains) == true
    }

    /// `kcs_` and 32 random bytes (base64url): the prefix lets secret scanners recognise a leaked one.
    private static func makeSecret() -> String { "kcs_" + SecretToken.generate() }

    /// The settings as stored: every problem named at once (as the clients file's are), the name trimmed, scopes
    /// sorted and unique.
    static func checked(_ given: IdentityOpenIDClientSettings, clientId: String, keys: OpenIDSigningKeys) async throws(ServiceError) -> IdentityOpenIDClientSettings {
        var problems: [String] = []
        var settings = given
        if !OpenIDClientsLoader.isClientId(clientId) { problems.append("id: must be 1 to 128 letters, digits or . _ - :") }
        settings.name = given.name.trimmingCharacters(in: .whitespacesAndNewlines)
        let isPublic = given.type == "public"
        switch given.type {
        case "public":
            if given.authentication != nil || given.jwks != nil { problems.append("authentication, jwks: a public client keeps no secret (PKCE binds its codes)") }
        case "confidential":
            switch given.authentication {
            case let method? where OpenIDClient.secretMethods.contains(method):
                if given.jwks != nil { problems.append("jwks: only with authentication private_key_jwt") }
            case "private_key_jwt":
                let jwks = given.jwks ?? []
                if jwks.isEmpty || jwks.count > 10 {
                    problems.append("jwks: private_key_jwt needs the client's public keys, 1 to 10 (EC P-256 or RSA)")
                } else if await !usable(jwks) {
                    problems.append("jwks: every key must be a public EC P-256 (ES256) or RSA (RS256, at least 2048 bits) key with a kid")
                }
            default:
                problems.append("authentication: must be client_secret_basic, client_secret_post or private_key_jwt")
            }
        default:
            problems.append("type: must be public or confidential")
        }
        if given.redirectURIs.isEmpty || given.redirectURIs.count > 20 { problems.append("redirectUris: 1 to 20") }
        if given.postLogoutRedirectURIs.count > 20 { problems.append("postLogoutRedirectUris: at most 20") }
        let scopes = Set(given.scopes)
        settings.scopes = scopes.sorted()
        problems += OpenIDClientsLoader.problems(
            name: settings.name, isPublic: isPublic, redirectURIs: Array(given.redirectURIs.prefix(20)),
            postLogoutRedirectURIs: Array(given.postLogoutRedirectURIs.prefix(20)), scopes: scopes, idTokenAlgorithm: given.idTokenAlgorithm,
            sectorIdentifier: given.sectorIdentifier
        )
        // The file's clients are checked against the keys when the settings are made (OpenIDProviderSettings).
        if ["ES256", "RS256"].contains(given.idTokenAlgorithm), keys.signing(given.idTokenAlgorithm) == nil {
            problems.append("idTokenAlgorithm: no \(given.idTokenAlgorithm) key is configured (KONTO_IDENTITY_OIDC_KEYS)")
        }
        guard problems.isEmpty else { throw refused(problems.joined(separator: "; ")) }
        return settings
    }

    /// Whether JWTKit takes every key as a public verification key of its kind.
    private static func usable(_ keys: [IdentityJSONWebKey]) async -> Bool {
        for key in keys {
            guard key.kid.utf8.count <= 256, !key.kid.isEmpty, let data = try? JSONEncoder().encode(key), let jwk = try? JSONDecoder().decode(JWK.self, from: data) else { return false }
            switch (key.kty, key.alg) {
            case ("EC", "ES256"):
                guard key.crv == "P-256", (try? ES256PublicKey(parameters: (x: key.x ?? "", y: key.y ?? ""))) != nil else { return false }
            case ("RSA", "RS256"):
                // swift-crypto refuses RSA keys under 2048 bits.
                guard let n = key.n, let e = key.e, (try? Insecure.RSA.PublicKey(modulus: n, exponent: e)) != nil else { return false }
            default:
                return false
            }
            guard (try? await JWTKeyCollection().add(jwk: jwk)) != nil else { return false }
        }
        return true
    }

    private static func settings(of client: OpenIDClient) -> IdentityOpenIDClientSettings {
        var keys: [IdentityJSONWebKey]?
        if case .privateKeyJWT(let given) = client.authentication { keys = given }
        return IdentityOpenIDClientSettings(
            name: client.name, type: client.isConfidential ? "confidential" : "public", authentication: client.isConfidential ? client.authentication.method : nil,
            jwks: keys, redirectURIs: client.redirectURIs, postLogoutRedirectURIs: client.postLogoutRedirectURIs, scopes: client.scopes.sorted(),
            firstParty: client.isFirstParty, idTokenAlgorithm: client.idTokenAlgorithm, sectorIdentifier: client.sectorIdentifier
        )
    }

    private static func info(_ stored: StoredOpenIDClient, at now: Timestamp) -> IdentityOpenIDClientInfo {
        let overlap = stored.previousSecretExpiresAt.flatMap { now < $0 ? $0 : nil }
        return IdentityOpenIDClientInfo(
            id: stored.id, source: .api, settings: stored.settings, createdAt: stored.createdAt, updatedAt: stored.updatedAt,
            secretCreatedAt: stored.secretCreatedAt, previousSecretExpiresAt: overlap
        )
    }
}
