import ServiceLifecycle

/// Work done every `interval` until graceful shutdown: the one shape of the services' sweeps (Identity's clean-ups,
/// expiry and provider revocations, Notifications' erasure and retention). The work is awaited before the next wait
/// starts, so sweeps never overlap; a sweep reports its own failures (it returns nothing to fail with), and the next
/// one is tried at the next interval. Shutdown ends a wait at once; a sweep under way is cancelled.
public struct PeriodicJob: Service {
    /// Whether the first sweep runs as the job starts, or after the first interval.
    public enum Start: Sendable {
        case immediately
        case afterInterval
    }

    public let interval: Duration
    public let start: Start
    private let work: @Sendable () async -> Void

    public init(every interval: Duration, start: Start = .afterInterval, _ work: @escaping @Sendable () async -> Void) {
        precondition(interval > .zero, "a periodic job needs an interval")
        self.interval = interval
        self.start = start
        self.work = work
    }

    public func run() async throws {
        try? await cancelWhenGracefulShutdown {
            if start == .immediately {
                await work()
            }
            while true {
                try await Task.sleep(for: interval)
                await work()
            }
        }
    }
}
