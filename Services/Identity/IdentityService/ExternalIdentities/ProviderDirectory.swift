import Foundation
import JWTKit
import KontoContracts
import KontoModel
import Logging

/// Each configured provider's discovery document and signing keys, fetched when first needed and cached.
///
/// Keys are refreshed when a token names a key id the cache does not hold (a provider rotates by publishing a new
/// key), at most once per ``keyRefreshCooldown`` per provider, so tokens with made-up key ids cannot make Identity
/// fetch again and again; concurrent misses share one fetch. The discovery document is kept for a day (fetched
/// again after a failure). Documents are bounded (64 KiB, 32 keys).
public actor ProviderDirectory {
    public let providers: IdentityProviders
    let fetcher: any ProviderFetcher
    let keyRefreshCooldown: Duration
    let metadataLifetime: Duration
    let clock: @Sendable () -> Timestamp
    let logger: Logger

    private var metadata: [String: (ProviderMetadata, fetchedAt: Timestamp)] = [:]
    /// When each provider's discovery last failed: not asked again for ``failureBackoff`` (a provider that is down is
    /// not asked on every sign-in).
    private var metadataFailures: [String: Timestamp] = [:]
    static let failureBackoff: Duration = .seconds(5)
    private var keys: [String: ProviderKeys] = [:]
    private var fetching: [String: Task<ProviderKeys, any Error>] = [:]
    private var metadataFetching: [String: Task<ProviderMetadata, any Error>] = [:]

    static let documentLimit = 64 * 1024
    static let maximumKeys = 32

    public init(
        providers: IdentityProviders,
        fetcher: any ProviderFetcher = HTTPProviderFetcher(),
        keyRefreshCooldown: Duration = .seconds(60),
        metadataLifetime: Duration = .seconds(86_400),
        clock: @escaping @Sendable () -> Timestamp = { .now },
        logger: Logger
    ) {
        self.providers = providers
        self.fetcher = fetcher
        self.keyRefreshCooldown = keyRefreshCooldown
        self.metadataLifetime = metadataLifetime
        self.clock = clock
        self.logger = logger
    }

    /// The keys a provider published, as last fetched.
    struct ProviderKeys: Sendable {
        var collection: JWTKeyCollection
        /// Each key id with the algorithm its JWK names, if it names one.
        var algorithms: [String: String?]
        var fetchedAt: Timestamp
    }

    /// The provider's discovery document (`identity.providerUnavailable` when it cannot be had). Concurrent callers
    /// share one fetch.
    func metadata(for provider: IdentityProvider) async throws(ServiceError) -> ProviderMetadata {
        let now = clock()
        if let (cached, fetchedAt) = metadata[provider.name], now < fetchedAt.adding(metadataLifetime) {
            return cached
        }
        if let failed = metadataFailures[provider.name], now < failed.adding(Self.failureBackoff) {
            throw .identityProviderUnavailable
        }
        let task: Task<ProviderMetadata, any Error>
        if let running = metadataFetching[provider.name] {
            task = running
        } else {
            let fetcher = fetcher
            let url = provider.issuer.hasSuffix("/") ? provider.issuer + ".well-known/openid-configuration" : provider.issuer + "/.well-known/openid-configuration"
            task = Task { () throws -> ProviderMetadata in
                let body = try await fetcher.get(url, limit: Self.documentLimit)
                return try JSONDecoder().decode(ProviderMetadata.self, from: Data(body))
            }
            metadataFetching[provider.name] = task
        }
        let document: ProviderMetadata
        do {
            document = try await task.value
        } catch {
            if metadataFetching[provider.name] == task {
                metadataFetching[provider.name] = nil
                metadataFailures[provider.name] = clock()
                logger.warning("identity provider discovery failed", metadata: ["konto.provider": "\(provider.name)", "konto.error": "\(error)"])
            }
            throw .identityProviderUnavailable
        }
        if metadataFetching[provider.name] == task { metadataFetching[provider.name] = nil }
        // OpenID Connect Discovery §4.3: the document's issuer is exactly the one configured.
        guard document.issuer == provider.issuer else {
            if metadataFailures[provider.name] == nil || metadata[provider.name] != nil {
                logger.error("identity provider discovery names another issuer", metadata: ["konto.provider": "\(provider.name)", "konto.issuer": "\(document.issuer.prefix(200))"])
            }
            metadataFailures[provider.name] = clock()
            throw .identityProviderUnavailable
        }
        guard ProviderURL.endpointsAcceptable(document, provider: provider) else {
            if metadataFailures[provider.name] == nil || metadata[provider.name] != nil {
                logger.error("identity provider discovery names endpoints Konto does not call (not https, or another host)", metadata: ["konto.provider": "\(provider.name)"])
            }
            metadataFailures[provider.name] = clock()
            throw .identityProviderUnavailable
        }
        metadata[provider.name] = (document, now)
        metadataFailures[provider.name] = nil
        return document
    }

    /// The key collection holding `keyId` (refreshed once when it does not, within the cooldown), with the algorithm
    /// the key's JWK names.
    func key(_ keyId: String?, of provider: IdentityProvider) async throws(ServiceError) -> (collection: JWTKeyCollection, algorithm: String?)? {
        let now = clock()
        if let current = keys[provider.name], let found = Self.find(keyId, in: current) {
            return (current.collection, found)
        }
        if let current = keys[provider.name], now < current.fetchedAt.adding(keyRefreshCooldown) {
            return nil
        }
        let fresh = try await refreshKeys(of: provider)
        return Self.find(keyId, in: fresh).map { (fresh.collection, $0) }
    }

    /// Which key a token's `kid` selects: that id; without one, the only key there is.
    private static func find(_ keyId: String?, in keys: ProviderKeys) -> String?? {
        if let keyId { return keys.algorithms[keyId] }
        return keys.algorithms.count == 1 ? keys.algorithms.first!.value : nil
    }

    private func refreshKeys(of provider: IdentityProvider) async throws(ServiceError) -> ProviderKeys {
        if let running = fetching[provider.name] {
            do { return try await running.value } catch { throw .identityProviderUnavailable }
        }
        let fetcher = fetcher
        let clock = clock
        // Registered before its first suspension, so a concurrent miss finds it and waits for the same fetch.
        let task = Task { () throws -> ProviderKeys in
            let metadata = try await self.metadata(for: provider)
            let body = try await fetcher.get(metadata.jwksURI, limit: Self.documentLimit)
            return try await Self.keys(from: body, at: clock())
        }
        fetching[provider.name] = task
        defer { fetching[provider.name] = nil }
        do {
            let fresh = try await task.value
            keys[provider.name] = fresh
            logger.info("identity provider keys fetched", metadata: ["konto.provider": "\(provider.name)", "konto.keys": "\(fresh.algorithms.count)"])
            return fresh
        } catch {
            logger.warning("identity provider keys could not be fetched", metadata: ["konto.provider": "\(provider.name)", "konto.error": "\(error)"])
            // A failed fetch counts for the cooldown too: a provider that is down is not asked on every sign-in.
            if var stale = keys[provider.name] {
                stale.fetchedAt = clock()
                keys[provider.name] = stale
            }
            throw .identityProviderUnavailable
        }
    }

    /// The signing keys of a JWKS document: those with a key id, for signatures (`use` absent or `sig`), of a type
    /// jwt-kit verifies. Each key is read on its own: one it cannot read (an encryption key, another type) is skipped
    /// rather than failing the whole document.
    static func keys(from body: [UInt8], at now: Timestamp) async throws -> ProviderKeys {
        let document = try JSONDecoder().decode(KeySetDocument.self, from: Data(body))
        guard document.keys.count <= maximumKeys else { throw ProviderFetchError("the JWKS holds more than \(maximumKeys) keys") }
        let collection = JWTKeyCollection()
        var algorithms: [String: String?] = [:]
        for entry in document.keys {
            guard let jwk = entry.jwk, let kid = jwk.keyIdentifier?.string, entry.use == nil || entry.use == "sig", jwk.privateExponent == nil else { continue }
            do {
                try await collection.add(jwk: jwk)
                algorithms[kid] = .some(jwk.algorithm?.rawValue)
            } catch {
                continue
            }
        }
        return ProviderKeys(collection: collection, algorithms: algorithms, fetchedAt: now)
    }

    private struct KeySetDocument: Decodable {
        var keys: [Entry]

        struct Entry: Decodable {
            var jwk: JWK?
            var use: String?

            enum CodingKeys: String, CodingKey { case use }

            init(from decoder: any Decoder) throws {
                jwk = try? JWK(from: decoder)
                use = try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .use)
            }
        }
    }
}
