import Foundation
import OpenAPIRuntime

/// A public key of a `private_key_jwt` client, as a JWK (RFC 7517): public members only.
public struct KontoOpenIDClientKey: Sendable, Equatable, Codable {
    /// `EC` or `RSA`.
    public var kty: String
    public var kid: String
    /// `ES256` or `RS256`.
    public var alg: String
    public var use: String?
    public var crv: String?
    public var x: String?
    public var y: String?
    public var n: String?
    public var e: String?

    public init(kty: String, kid: String, alg: String, use: String? = nil, crv: String? = nil, x: String? = nil, y: String? = nil, n: String? = nil, e: String? = nil) {
        self.kty = kty
        self.kid = kid
        self.alg = alg
        self.use = use
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
    }

    /// The keys of a JWK Set's JSON (`{"keys": [...]}`). A private member (`d`, an RSA key's primes) is refused, not
    /// dropped: a private key handed over has left its application's servers and must be replaced.
    public static func keys(jwkSet data: Data) throws -> [KontoOpenIDClientKey] {
        let usage = { (detail: String) in KontoClientError(code: "client.usage", status: 0, detail: detail) }
        guard let set = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let keys = set["keys"] as? [[String: Any]] else {
            throw usage("A JWK Set is a JSON object {\"keys\": [...]} of the client's public keys.")
        }
        let privateMembers = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]
        guard keys.allSatisfy({ key in !privateMembers.contains { key[$0] != nil } }) else {
            throw usage("The JWK Set holds a private key: give the public keys only (and replace the private key that was handed over).")
        }
        struct KeySet: Decodable { var keys: [KontoOpenIDClientKey] }
        guard let decoded = try? JSONDecoder().decode(KeySet.self, from: data) else {
            throw usage("Every key of the JWK Set needs kty, kid and alg.")
        }
        return decoded.keys
    }
}

/// An OpenID Provider client (docs/OIDC.md, "Clients through the admin API"): never its secret.
public struct KontoOpenIDClient: Sendable, Equatable, Encodable {
    public var id: String
    /// `file` (the deployment's clients file, changed only there) or `api`.
    public var source: String
    public var name: String
    /// `public` or `confidential`.
    public var type: String
    /// A confidential client's: `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
    public var authentication: String?
    /// A `private_key_jwt` client's public keys.
    public var keys: [KontoOpenIDClientKey]?
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    public var scopes: [String]
    public var firstParty: Bool
    public var idTokenAlgorithm: String
    public var sectorIdentifier: String?
    public var createdAt: Date?
    public var updatedAt: Date?
    public var secretCreatedAt: Date?
    /// Until when the secret before the last rotation is still accepted.
    public var previousSecretExpiresAt: Date?

    // The API's names, for scripts reading `--json`.
    enum CodingKeys: String, CodingKey {
        case id, source, name, type, authentication, keys, firstParty, idTokenAlgorithm, sectorIdentifier, createdAt, updatedAt, secretCreatedAt,
            previousSecretExpiresAt, scopes
        case redirectURIs = "redirectUris"
        case postLogoutRedirectURIs = "postLogoutRedirectUris"
    }
}

/// What registering or changing a client takes, as the clients file's entries: its secret is never given (Konto makes
/// it), a `private_key_jwt` client's public keys are.
public struct KontoOpenIDClientSettings: Sendable, Equatable {
    public var name: String
    /// `public` or `confidential`.
    public var type: String
    /// A confidential client's: `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
    public var authentication: String?
    public var keys: [KontoOpenIDClientKey]?
    public var redirectURIs: [String]
    public var postLogoutRedirectURIs: [String]
    /// Among openid, profile, email, offline_access; openid always.
    public var scopes: [String]
    /// The deployment's own application, which gets no consent page.
    public var firstParty: Bool
    /// `ES256` (nil: the default) or `RS256`.
    public var idTokenAlgorithm: String?
    /// Pairwise subject identifiers for this sector (a host name).
    public var sectorIdentifier: String?

    public init(
        name: String, type: String, authentication: String? = nil, keys: [KontoOpenIDClientKey]? = nil, redirectURIs: [String],
        postLogoutRedirectURIs: [String] = [], scopes: [String] = ["openid"], firstParty: Bool = false, idTokenAlgorithm: String? = nil,
        sectorIdentifier: String? = nil
    ) {
        self.name = name
        self.type = type
        self.authentication = authentication
        self.keys = keys
        self.redirectURIs = redirectURIs
        self.postLogoutRedirectURIs = postLogoutRedirectURIs
        self.scopes = scopes
        self.firstParty = firstParty
        self.idTokenAlgorithm = idTokenAlgorithm
        self.sectorIdentifier = sectorIdentifier
    }
}

/// A client just registered or given a new secret, with that secret (shown this once; nil for a client without one).
public struct KontoSavedOpenIDClient: Sendable, Equatable, Encodable {
    public var client: KontoOpenIDClient
    public var secret: String?
}

/// What removing a client ended with it.
public struct KontoRemovedOpenIDClient: Sendable, Equatable, Encodable {
    public var id: String
    public var grantsEnded: Int
    public var consentsRemoved: Int
}

extension KontoAdmin {
    /// The OpenID Provider's clients (scope clients:write): the clients file's, then those registered through the API.
    public func openIDClients() async throws -> [KontoOpenIDClient] {
        switch try await client.call(token: key, { try await $0.adminListOpenIDClients() }) {
        case .ok(let ok): return try ok.body.json.clients.map(Self.openIDClient)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Registers a client; a secret client's secret is made and answered this once.
    public func createOpenIDClient(id: String, _ settings: KontoOpenIDClientSettings) async throws -> KontoSavedOpenIDClient {
        let body = try Self.body(settings, id: id)
        switch try await client.call(token: key, { try await $0.adminCreateOpenIDClient(body: .json(body)) }) {
        case .created(let created):
            let saved = try created.body.json
            return KontoSavedOpenIDClient(client: Self.openIDClient(saved.client), secret: saved.secret)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Replaces a registered client's settings; its type, its kind of authentication and its secret stay.
    public func updateOpenIDClient(id: String, _ settings: KontoOpenIDClientSettings) async throws -> KontoOpenIDClient {
        let body = try Self.body(settings, id: id)
        switch try await client.call(token: key, { try await $0.adminUpdateOpenIDClient(path: .init(clientId: id), body: .json(body)) }) {
        case .ok(let ok): return Self.openIDClient(try ok.body.json)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Gives a secret client a new secret, answered this once; the previous one is refused at once, or still accepted
    /// for `keepPreviousSeconds` (at most seven days) while the application's servers change over.
    public func rotateOpenIDClientSecret(id: String, keepPreviousSeconds: Int? = nil) async throws -> KontoSavedOpenIDClient {
        let body = Operations.AdminRotateOpenIDClientSecret.Input.Body.json(.init(keepPreviousSeconds: keepPreviousSeconds))
        switch try await client.call(token: key, { try await $0.adminRotateOpenIDClientSecret(path: .init(clientId: id), body: body) }) {
        case .ok(let ok):
            let saved = try ok.body.json
            return KontoSavedOpenIDClient(client: Self.openIDClient(saved.client), secret: saved.secret)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Removes a client registered through the API, with every account's codes, grants and consents for it.
    public func removeOpenIDClient(id: String) async throws -> KontoRemovedOpenIDClient {
        switch try await client.call(token: key, { try await $0.adminRemoveOpenIDClient(path: .init(clientId: id)) }) {
        case .ok(let ok):
            let removed = try ok.body.json
            return KontoRemovedOpenIDClient(id: id, grantsEnded: removed.grantsEnded, consentsRemoved: removed.consentsRemoved)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    // MARK: Translation

    private static func openIDClient(_ client: Components.Schemas.OpenIDClient) -> KontoOpenIDClient {
        KontoOpenIDClient(
            id: client.id, source: client.source.rawValue, name: client.name, type: client._type.rawValue, authentication: client.authentication,
            keys: client.jwks?.keys.map {
                KontoOpenIDClientKey(kty: $0.kty.rawValue, kid: $0.kid, alg: $0.alg.rawValue, use: $0.use, crv: $0.crv, x: $0.x, y: $0.y, n: $0.n, e: $0.e)
            },
            redirectURIs: client.redirectUris, postLogoutRedirectURIs: client.postLogoutRedirectUris, scopes: client.scopes, firstParty: client.firstParty,
            idTokenAlgorithm: client.idTokenAlgorithm, sectorIdentifier: client.sectorIdentifier, createdAt: client.createdAt, updatedAt: client.updatedAt,
            secretCreatedAt: client.secretCreatedAt, previousSecretExpiresAt: client.previousSecretExpiresAt
        )
    }

    /// The API's body; a value the API has no case for is refused here, named, before any call (as ``createKey`` does).
    private static func body(_ settings: KontoOpenIDClientSettings, id: String) throws -> Components.Schemas.OpenIDClientSettings {
        func known<Value: RawRepresentable<String>>(_ text: String?, _ field: String, _ allowed: String) throws -> Value? {
            guard let text else { return nil }
            guard let value = Value(rawValue: text) else { throw KontoClientError(code: "client.usage", status: 0, detail: "\(field): '\(text)' is not \(allowed).") }
            return value
        }
        typealias Settings = Components.Schemas.OpenIDClientSettings
        let type: Settings._TypePayload = try known(settings.type, "type", "public or confidential")!
        let authentication: Settings.AuthenticationPayload? = try known(
            settings.authentication, "authentication", "client_secret_basic, client_secret_post or private_key_jwt"
        )
        let algorithm: Settings.IdTokenAlgorithmPayload? = try known(settings.idTokenAlgorithm, "idTokenAlgorithm", "ES256 or RS256")
        let keys = try settings.keys.map { keys in
            try keys.map { key -> Components.Schemas.OpenIDClientPublicKey in
                Components.Schemas.OpenIDClientPublicKey(
                    kty: try known(key.kty, "jwks kty", "EC or RSA")!, kid: key.kid, alg: try known(key.alg, "jwks alg", "ES256 or RS256")!,
                    use: key.use, crv: key.crv, x: key.x, y: key.y, n: key.n, e: key.e
                )
            }
        }
        return Settings(
            id: id, name: settings.name, _type: type, authentication: authentication, jwks: keys.map { .init(keys: $0) }, redirectUris: settings.redirectURIs,
            postLogoutRedirectUris: settings.postLogoutRedirectURIs, scopes: settings.scopes, firstParty: settings.firstParty, idTokenAlgorithm: algorithm,
            sectorIdentifier: settings.sectorIdentifier
        )
    }
}
