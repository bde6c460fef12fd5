/// How long to wait before trying again after consecutive failures: `initial`, doubling with each further failure, at
/// most `maximum`, optionally jittered so that many waiters do not retry in step. The one back-off of the platform:
/// the wire client's reconnects, the outbox relays, the event consumers, the cache invalidator, start-up steps,
/// Notifications' redeliveries, Profile's lost races and Identity's login throttle all use it.
///
/// It lives beside the error codes, which say *whether* to try again; this says *when*.
public struct Backoff: Sendable, Hashable {
    /// How a delay is spread.
    public enum Jitter: Sendable, Hashable {
        /// Exactly the delay.
        case none
        /// Between half the delay and the delay: spread out, yet never much sooner.
        case equal
        /// Between zero and the delay (contention: any spread will do).
        case full
    }

    public var initial: Duration
    public var maximum: Duration
    public var jitter: Jitter

    public init(initial: Duration, maximum: Duration, jitter: Jitter = .none) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        self.jitter = jitter
    }

    /// The delay before the next try after `failures` consecutive failures: none for 0, `initial` for 1, then
    /// doubling, at most ``maximum`` (before jitter).
    public func delay(afterFailures failures: Int) -> Duration {
        guard failures > 0 else { return .zero }
        // 2^30 times any initial delay worth having is past any maximum worth having: no need to go further.
        let exponent = min(failures - 1, 30)
        let delay = min(initial * (1 << exponent), maximum)
        switch jitter {
        case .none: return delay
        case .equal: return delay * Double.random(in: 0.5...1)
        case .full: return delay * Double.random(in: 0...1)
        }
    }

    /// Failures in a row, for a loop that retries: ``failed()`` counts one and gives the delay to wait, ``succeeded()``
    /// starts over.
    public struct Attempts: Sendable {
        public let backoff: Backoff
        public private(set) var failures = 0

        public init(_ backoff: Backoff) {
            self.backoff = backoff
        }

        /// Counts a failure; the delay to wait before the next try.
        public mutating func failed() -> Duration {
            failures += 1
            return backoff.delay(afterFailures: failures)
        }

        public mutating func succeeded() {
            failures = 0
        }
    }

    /// A counter of failures in a row under this back-off.
    public func attempts() -> Attempts {
        Attempts(self)
    }
}
