import HTTPTypes
import Synchronization

/// The gateway's rate limits per client address: one for every route, and a stricter one for the routes that take
/// credentials or start a reset (login, sign-up, reauthentication, password reset), where guessing and flooding
/// cost the most. Health and metrics are exempt, so probes never get 429.
final class GatewayRateLimits: Sendable {
    let general: RateLimiter.Rule
    let credentials: RateLimiter.Rule
    private let limiter: Mutex<RateLimiter>

    static let apiCredentialRoutes: Set<String> = [
        "/v1/sessions", "/v1/accounts", "/v1/account/reauthenticate", "/v1/password-resets", "/v1/password-resets/confirm",
    ]
    /// The API's and the web console's.
    let credentialRoutes: Set<String>

    init(generalPerMinute: Int, credentialsPerMinute: Int, consoleCredentialRoutes: Set<String> = [], maximumAddresses: Int = 100_000) {
        self.credentialRoutes = Self.apiCredentialRoutes.union(consoleCredentialRoutes)
        self.general = RateLimiter.Rule(name: "general", perMinute: generalPerMinute)
        self.credentials = RateLimiter.Rule(name: "credentials", perMinute: credentialsPerMinute)
        self.limiter = Mutex(RateLimiter(maximumKeys: maximumAddresses))
    }

    /// Takes a token from each bucket the request counts against; the first refusal decides.
    func check(method: HTTPRequest.Method, path: String, address: String?, now: ContinuousClock.Instant = .now) -> RateLimiter.Decision {
        if path.hasPrefix("/health/") || path == "/metrics" { return .allowed }
        // Without an address (a trusted proxy header missing) requests share one bucket, which is the safe side.
        let address = address ?? "unknown"
        return limiter.withLock { limiter in
            let decision = limiter.take(address, rule: general, now: now)
            guard decision == .allowed, method == .post, credentialRoutes.contains(path) else { return decision }
            return limiter.take(address, rule: credentials, now: now)
        }
    }
}
