import KontoModel

/// When repeated failed logins lock a key (a userId, a client address), and for how long.
///
/// After `threshold` failures within `window`, each further attempt must wait `baseDelay · 2^(failures −
/// threshold)`, at most `maximumDelay`, counted from the last failure. The counts live in the shared storage, so
/// every replica applies the same lock; a success clears the userId's count.
public struct ThrottlePolicy: Sendable, Equatable {
    public var threshold: Int
    public var baseDelay: Duration
    public var maximumDelay: Duration
    /// Failures older than this are forgotten.
    public var window: Duration

    public init(threshold: Int = 5, baseDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(900), window: Duration = .seconds(3_600)) {
        self.threshold = max(1, threshold)
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.window = window
    }

    /// How long a key with `failures` failures must wait after its last one; zero below the threshold.
    public func delay(afterFailures failures: Int) -> Duration {
        guard failures >= threshold else { return .zero }
        return Backoff(initial: baseDelay, maximum: maximumDelay).delay(afterFailures: failures - threshold + 1)
    }

    /// Whole seconds to wait before the next attempt, or nil when none of the keys is locked at `now`.
    public func retryAfter(_ counts: [FailureCount], at now: Timestamp) -> Int? {
        var longest: Int64 = 0
        for count in counts {
            guard let last = count.lastFailureAt else { continue }
            let delay = delay(afterFailures: count.count)
            let remaining = last.milliseconds + delay.milliseconds - now.milliseconds
            longest = max(longest, remaining)
        }
        guard longest > 0 else { return nil }
        return Int((longest + 999) / 1_000)
    }
}
