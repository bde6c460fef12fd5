import KontoContracts
import KontoModel
import KontoPostgres
import KontoRuntime
import KontoWire
import Logging
import ServiceLifecycle

/// Publishes a producer's outbox to Notifications: the transactional outbox pattern's relay.
///
/// Events are removed from the outbox only after Notifications answered the publish, and Notifications stores each
/// event id once, so a relay that dies between the two only sends a batch again (at least once, never lost). The
/// relay wakes when the outbox changes (``OutboxStore/watchOutbox(_:)``: PostgreSQL's LISTEN/NOTIFY, or in
/// process), with a poll as the fallback, and backs off while Notifications cannot be reached.
public struct OutboxRelay: Service {
    public struct Configuration: Sendable {
        /// Events per publish (Notifications accepts at most ``NotificationsContract/maximumPublishBatch``).
        public var batchSize = 100
        /// The longest the relay sleeps when nothing told it about new events.
        public var pollInterval: Duration = .seconds(1)
        /// While the outbox cannot be watched or Notifications reached.
        public var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(5))
        /// A drain (lease, select, publish, delete) not finished by then is abandoned and tried again: a query stuck
        /// on a connection that PostgreSQL's restart left half-dead must not stop the relay for good (the end-to-end
        /// fault tests found relays silent after a restart). Longer than a publish may take (the wire's deadline).
        public var drainTimeout: Duration = .seconds(30)

        public init() {}
    }

    private let store: any OutboxStore
    private let notifications: WireClient
    private let configuration: Configuration
    private let logger: Logger

    public init(store: any OutboxStore, notifications: WireClient, configuration: Configuration = Configuration(), logger: Logger) {
        self.store = store
        self.notifications = notifications
        self.configuration = configuration
        self.logger = logger
    }

    public func run() async throws {
        let changed = Wakeup()
        await withDiscardingTaskGroup { group in
            group.addTask {
                await self.watch(changed)
            }
            await self.relay(changed)
            group.cancelAll()
        }
    }

    /// Keeps watching the outbox for changes, restarting after failures.
    private func watch(_ changed: Wakeup) async {
        var attempts = configuration.backoff.attempts()
        while !Task.isCancelled {
            do {
                try await store.watchOutbox { changed.notify() }
                attempts.succeeded()
            } catch {
                if Task.isCancelled { return }
                logger.debug("outbox watch failed; polling meanwhile", metadata: ["konto.error": "\(error)"])
            }
            try? await Task.sleep(for: attempts.failed())
        }
    }

    /// Publishes until graceful shutdown, then stops (what is left stays in the outbox for the next start).
    private func relay(_ changed: Wakeup) async {
        let client = notifications
        await cancelWhenGracefulShutdown {
            var attempts = configuration.backoff.attempts()
            var failing = false
            while !Task.isCancelled {
                let generation = changed.generation
                do {
                    let (store, batchSize) = (store, configuration.batchSize)
                    let published = try await OperationTimeout.run(configuration.drainTimeout) {
                        try await store.drainOutbox(limit: batchSize) { events in
                            _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: events))
                        }
                    }
                    if failing {
                        logger.info("outbox relay publishing again")
                        failing = false
                    }
                    attempts.succeeded()
                    if published == configuration.batchSize { continue }
                    await changed.wait(after: generation, timeout: configuration.pollInterval)
                } catch {
                    if Task.isCancelled { return }
                    if !failing {
                        // Once per outage, not once per attempt.
                        logger.warning("outbox relay cannot publish; events wait in the outbox", metadata: ["konto.error": "\(error)"])
                        failing = true
                    }
                    try? await Task.sleep(for: attempts.failed())
                }
            }
        }
    }
}

/// Runs `body` until it returns or a graceful shutdown cancels it.
private func cancelWhenGracefulShutdown(_ body: @escaping @Sendable () async -> Void) async {
    await ServiceLifecycle.cancelWhenGracefulShutdown {
        await body()
    }
}
