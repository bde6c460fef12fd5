import KontoErrors
import KontoRuntime
import Logging
import ServiceLifecycle

/// Wakes this replica's tails and consumers when any replica stored events or deliveries
/// (``NotificationStorage/watchPublished(_:)``), so a tail or consumer served here reads another replica's events at
/// once instead of at its next poll (`KONTO_NOTIFICATIONS_POLL_MS`, a second by default). While the watch is down the
/// poll still finds everything, only later.
struct PublishedWatcher: Service {
    let store: NotificationStore
    let logger: Logger
    var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(5))

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.watch()
        }
    }

    private func watch() async {
        var attempts = backoff.attempts()
        var failing = false
        while !Task.isCancelled {
            do {
                try await store.storage.watchPublished { [store] in store.published.notify() }
                attempts.succeeded()
            } catch {
                if Task.isCancelled { return }
                if !failing {
                    logger.warning("cannot watch for other replicas' events; polling meanwhile", metadata: ["konto.error": "\(error)"])
                    failing = true
                }
            }
            try? await Task.sleep(for: attempts.failed())
        }
    }
}
