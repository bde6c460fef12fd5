import HTTPTypes
import KontoErrors
import Synchronization

/// The gateway's rate limits per client address: one for every route, and a stricter one for the routes that take
/// credentials, start a reset or mail a chosen address (login, sign-up, reauthentication, password reset, a userId or
/// contact address change), where guessing and flooding
/// cost the most. Health and metrics are exempt, so probes never get 429.
///
/// The general limit is taken for every request before routing; the credential limit where the route is known, as
/// matched (``CredentialRateLimitMiddleware`` by the API's operation, the console's form handlers by their route), so
/// every spelling of a path the router accepts (`/v1//sessions`, `/v1/sessions/`) counts the same.
final class GatewayRateLimits: Sendable {
    let general: RateLimiter.Rule
    let credentials: RateLimiter.Rule
    let limiter: Mutex<RateLimiter>

    /// The API's operations (`operationId`s of openapi.yaml) that take credentials or start a reset.
    static let credentialOperations: Set<String> = [
        "logIn", "signUp", "reauthenticate", "requestPasswordReset", "confirmPasswordReset", "completeSecondFactor",
        "confirmTOTP", "passkeyLogIn", "registerPasskey", "requestEmailVerification", "confirmEmailVerification", "confirmEmailVerificationCode",
        "requestEmailCode", "logInWithEmailCode", "logInWithProvider", "linkIdentity",
        // They can mail chosen addresses (a userId change, a new contact address).
        "changeUserId", "modifyAccount",
        // The whole account in one answer, behind a privileged window: each one is a heavy read worth limiting.
        "exportAccount",
    ]

    init(generalPerMinute: Int, credentialsPerMinute: Int, maximumAddresses: Int = 100_000) {
        self.general = RateLimiter.Rule(name: "general", perMinute: generalPerMinute)
        self.credentials = RateLimiter.Rule(name: "credentials", perMinute: credentialsPerMinute)
        self.limiter = Mutex(RateLimiter(maximumKeys: maximumAddresses))
    }

    /// Takes a token from the general bucket of the request's address.
    func check(path: String, address: String?, now: ContinuousClock.Instant = .now) -> RateLimiter.Decision {
        if path.hasPrefix("/health/") || path == "/metrics" { return .allowed }
        return take(general, address: address, now: now)
    }

    /// Takes a token from the credential bucket of the address (a matched credential route).
    func checkCredentials(address: String?, now: ContinuousClock.Instant = .now) -> RateLimiter.Decision {
        take(credentials, address: address, now: now)
    }

    /// The refusal for a request over a limit.
    static func refusal(retryAfter: Int) -> GatewayProblem {
        GatewayProblem(status: .tooManyRequests, code: KontoErrorCode.requestRateLimited, detail: "Too many requests from this address.", retryAfter: retryAfter)
    }

    private func take(_ rule: RateLimiter.Rule, address: String?, now: ContinuousClock.Instant) -> RateLimiter.Decision {
        // Without an address (a trusted proxy header missing) requests share one bucket, which is the safe side.
        let address = address ?? "unknown"
        return limiter.withLock { $0.take(address, rule: rule, now: now) }
    }
}

extension GatewayRateLimits {
    /// Whether the address's credential bucket is empty, without taking from it: OAuth's client authentications
    /// are counted only when they fail (``noteFailedCredentials(address:)``), so a busy confidential client is never
    /// throttled for succeeding.
    func peekCredentials(address: String?, now: ContinuousClock.Instant = .now) -> RateLimiter.Decision {
        let address = address ?? "unknown"
        return limiter.withLock { $0.peek(address, rule: credentials, now: now) }
    }

    /// A failed client authentication: one token from the address's credential bucket.
    func noteFailedCredentials(address: String?, now: ContinuousClock.Instant = .now) {
        _ = checkCredentials(address: address, now: now)
    }
}
