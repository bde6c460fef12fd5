import Foundation
import OpenAPIRuntime

/// The OpenID Provider's clients for the admin console (docs/OIDC.md, "Clients through the admin API"), through the
/// admin API's handlers (GatewayAPI+AdminClients) with the console's key, as plain values.
extension GatewayAdminOperations {
    /// A registered client as listed: never its secret.
    package struct OpenIDClient: Sendable, Equatable {
        package var id: String
        /// `file` (the deployment's clients file, changed only there) or `api`.
        package var source: String
        package var name: String
        /// `public` or `confidential`.
        package var type: String
        /// A confidential client's: `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
        package var authentication: String?
        /// The kids of a `private_key_jwt` client's public keys.
        package var keyIds: [String]
        /// Those keys as a JWK Set's JSON, as the registration form takes them: a change must give them again.
        package var jwks: String?
        package var redirectURIs: [String]
        package var postLogoutRedirectURIs: [String]
        package var scopes: [String]
        package var firstParty: Bool
        package var idTokenAlgorithm: String
        package var sectorIdentifier: String?
        /// The API's only (the file's have none).
        package var createdAt: Date?
        package var secretCreatedAt: Date?
        /// Until when the secret before the last rotation is still accepted.
        package var previousSecretExpiresAt: Date?

        /// Whether it keeps a secret Konto made (and so can be given a new one).
        package var usesSecret: Bool { authentication == "client_secret_basic" || authentication == "client_secret_post" }

        /// Its settings as registering (or changing) it takes them: what a change starts from.
        package var settings: OpenIDClientSettings {
            OpenIDClientSettings(
                id: id, name: name, type: type, authentication: authentication, jwks: jwks, redirectURIs: redirectURIs,
                postLogoutRedirectURIs: postLogoutRedirectURIs, scopes: scopes, firstParty: firstParty, idTokenAlgorithm: idTokenAlgorithm,
                sectorIdentifier: sectorIdentifier
            )
        }
    }

    /// What registering a client takes, as the console's form gives it: the API's values as text, checked by the API
    /// (and Identity) so the console refuses exactly what the API refuses.
    package struct OpenIDClientSettings: Sendable, Equatable {
        package var id: String
        package var name: String
        package var type: String
        /// Ignored for a public client.
        package var authentication: String?
        /// A JWK Set's JSON (`{"keys": [...]}`), public keys only: a `private_key_jwt` client's.
        package var jwks: String?
        package var redirectURIs: [String]
        package var postLogoutRedirectURIs: [String]
        package var scopes: [String]
        package var firstParty: Bool
        /// nil: ES256.
        package var idTokenAlgorithm: String?
        package var sectorIdentifier: String?

        package init(
            id: String, name: String, type: String, authentication: String? = nil, jwks: String? = nil, redirectURIs: [String],
            postLogoutRedirectURIs: [String] = [], scopes: [String] = ["openid"], firstParty: Bool = false, idTokenAlgorithm: String? = nil,
            sectorIdentifier: String? = nil
        ) {
            self.id = id
            self.name = name
            self.type = type
            self.authentication = authentication
            self.jwks = jwks
            self.redirectURIs = redirectURIs
            self.postLogoutRedirectURIs = postLogoutRedirectURIs
            self.scopes = scopes
            self.firstParty = firstParty
            self.idTokenAlgorithm = idTokenAlgorithm
            self.sectorIdentifier = sectorIdentifier
        }
    }

    /// The clients: the file's, then those registered through the API.
    package func openIDClients() async throws -> [OpenIDClient] {
        switch try await api.adminListOpenIDClients(.init()) {
        case .ok(let ok): return try ok.body.json.clients.map(Self.openIDClient)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    /// Registers a client; answers it and, for a secret client, its secret (shown this once).
    package func createOpenIDClient(_ settings: OpenIDClientSettings) async throws -> (client: OpenIDClient, secret: String?) {
        switch try await api.adminCreateOpenIDClient(.init(body: .json(try Self.body(settings)))) {
        case .created(let created):
            let body = try created.body.json
            return (Self.openIDClient(body.client), body.secret)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    /// Replaces the settings of a client registered through the API (`settings.id` names it); its type, kind of
    /// authentication and secret stay, so the API refuses a change of those.
    package func updateOpenIDClient(_ settings: OpenIDClientSettings) async throws -> OpenIDClient {
        let input = Operations.AdminUpdateOpenIDClient.Input(path: .init(clientId: settings.id), body: .json(try Self.body(settings)))
        switch try await api.adminUpdateOpenIDClient(input) {
        case .ok(let ok): return Self.openIDClient(try ok.body.json)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    /// Gives a secret client a new secret (shown this once); the previous one is accepted for `keepPreviousSeconds`.
    package func rotateOpenIDClientSecret(clientId: String, keepPreviousSeconds: Int) async throws -> (client: OpenIDClient, secret: String?) {
        let input = Operations.AdminRotateOpenIDClientSecret.Input(path: .init(clientId: clientId), body: .json(.init(keepPreviousSeconds: keepPreviousSeconds)))
        switch try await api.adminRotateOpenIDClientSecret(input) {
        case .ok(let ok):
            let body = try ok.body.json
            return (Self.openIDClient(body.client), body.secret)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    /// Removes a client registered through the API; answers how many grants ended and consents went with it.
    package func removeOpenIDClient(clientId: String) async throws -> (grantsEnded: Int, consentsRemoved: Int) {
        switch try await api.adminRemoveOpenIDClient(.init(path: .init(clientId: clientId))) {
        case .ok(let ok):
            let body = try ok.body.json
            return (body.grantsEnded, body.consentsRemoved)
        case .default(let status, _): throw Self.unexpected(status)
        }
    }

    // MARK: Translation

    static func openIDClient(_ client: Components.Schemas.OpenIDClient) -> OpenIDClient {
        OpenIDClient(
            id: client.id, source: client.source.rawValue, name: client.name, type: client._type.rawValue, authentication: client.authentication,
            keyIds: client.jwks?.keys.map(\.kid) ?? [], jwks: client.jwks.flatMap(Self.jwkSet), redirectURIs: client.redirectUris, postLogoutRedirectURIs: client.postLogoutRedirectUris,
            scopes: client.scopes, firstParty: client.firstParty, idTokenAlgorithm: client.idTokenAlgorithm, sectorIdentifier: client.sectorIdentifier,
            createdAt: client.createdAt, secretCreatedAt: client.secretCreatedAt, previousSecretExpiresAt: client.previousSecretExpiresAt
        )
    }

    /// A client's public keys as a JWK Set's JSON, its members sorted so the form shows them the same each time.
    static func jwkSet(_ keys: Components.Schemas.OpenIDClientPublicKeys) -> String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(keys)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The API's body for `settings`; a value the API's schema has no case for is its malformed request, named.
    static func body(_ settings: OpenIDClientSettings) throws -> Components.Schemas.OpenIDClientSettings {
        guard let type = Components.Schemas.OpenIDClientSettings._TypePayload(rawValue: settings.type) else {
            throw GatewayProblem.malformed("type: must be public or confidential.")
        }
        var authentication: Components.Schemas.OpenIDClientSettings.AuthenticationPayload?
        var jwks: Components.Schemas.OpenIDClientPublicKeys?
        // A public client keeps no secret and no keys: whatever the form still holds for them is not sent.
        if type == .confidential {
            guard let method = settings.authentication.flatMap(Components.Schemas.OpenIDClientSettings.AuthenticationPayload.init(rawValue:)) else {
                throw GatewayProblem.malformed("authentication: must be client_secret_basic, client_secret_post or private_key_jwt.")
            }
            authentication = method
            if let text = settings.jwks?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty { jwks = try Self.jwks(json: text) }
        }
        var algorithm: Components.Schemas.OpenIDClientSettings.IdTokenAlgorithmPayload?
        if let given = settings.idTokenAlgorithm {
            guard let known = Components.Schemas.OpenIDClientSettings.IdTokenAlgorithmPayload(rawValue: given) else {
                throw GatewayProblem.malformed("idTokenAlgorithm: must be ES256 or RS256.")
            }
            algorithm = known
        }
        return Components.Schemas.OpenIDClientSettings(
            id: settings.id, name: settings.name, _type: type, authentication: authentication, jwks: jwks, redirectUris: settings.redirectURIs,
            postLogoutRedirectUris: settings.postLogoutRedirectURIs, scopes: settings.scopes, firstParty: settings.firstParty, idTokenAlgorithm: algorithm,
            sectorIdentifier: settings.sectorIdentifier.flatMap { $0.isEmpty ? nil : $0 }
        )
    }

    /// A JWK Set's public keys. A private member (`d`, an RSA key's primes) is refused rather than dropped: a private
    /// key pasted here has left its application's servers and must be replaced, not registered.
    static func jwks(json text: String) throws -> Components.Schemas.OpenIDClientPublicKeys {
        let data = Data(text.utf8)
        let set = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        guard let keys = set?["keys"] as? [[String: Any]] else {
            throw GatewayProblem.malformed("jwks: must be a JWK Set, {\"keys\": [...]}, of the client's public keys.")
        }
        let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
        guard keys.allSatisfy({ key in !privateMembers.contains { key[$0] != nil } }) else {
            throw GatewayProblem.malformed("jwks: holds a private key; give the public keys only (and replace the private key that was pasted).")
        }
        guard let decoded = try? JSONDecoder().decode(Components.Schemas.OpenIDClientPublicKeys.self, from: data) else {
            throw GatewayProblem.malformed("jwks: every key needs kty (EC or RSA), kid and alg (ES256 or RS256).")
        }
        return decoded
    }
}
