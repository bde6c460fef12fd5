import GatewayService
import Synchronization

/// The identity providers the setup page offers, asked of Identity at most once a minute: they are the deployment's
/// configuration, and the login page is the console's most visited one. A failed ask is not kept (the page then
/// offers none, and the next visit asks again).
final class ConsoleProviderList: Sendable {
    private let cached = Mutex<(providers: [GatewayOperations.IdentityProvider], at: ContinuousClock.Instant)?>(nil)
    static let lifetime: Duration = .seconds(60)

    func providers(_ fetch: () async throws -> [GatewayOperations.IdentityProvider]) async -> [GatewayOperations.IdentityProvider] {
        let now = ContinuousClock.now
        if let (providers, at) = cached.withLock({ $0 }), now - at < Self.lifetime { return providers }
        guard let providers = try? await fetch() else { return [] }
        cached.withLock { $0 = (providers, now) }
        return providers
    }
}
