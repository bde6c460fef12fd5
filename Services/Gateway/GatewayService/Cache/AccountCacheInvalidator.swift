import Foundation
import KontoContracts
import KontoModel
import KontoWire
import Logging
import ServiceLifecycle

/// Keeps the ``AccountCache`` honest: follows Notifications' tail of every account's events and drops what each
/// event's account has in the cache. The cache is live only while the tail runs; when it ends (Notifications down
/// or restarting) the cache empties and stops serving until a new tail has started.
struct AccountCacheInvalidator: Service {
    let client: WireClient
    let cache: AccountCache
    let metrics: GatewayMetrics
    let logger: Logger
    var credit = 256
    /// While the tail cannot be followed (the cache is off meanwhile).
    var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(5))

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await self.follow()
        }
        cache.setLive(false)
    }

    private func follow() async {
        var attempts = backoff.attempts()
        var failing = false
        // This cache's previous reader: its tail ended and the cache emptied, so the next registration retires it
        // rather than leave barriers waiting for it until its lease ends.
        var previousReader: UUID?
        while !Task.isCancelled {
            do {
                // The cursor first: every change committed after it has its event in the tail, so what is read
                // from the services after going live is invalidated by the tail when it changes.
                // As a reader that holds a cache: from now on a change's barrier (GatewayAPI.awaitCaches) waits until
                // this tail has acknowledged the change's events, so a logout at another gateway is refused here on
                // the very next request.
                let cursor = try await client.call(NotificationsContract.tailCursor, NotificationsTailCursorRequest(holdsCache: true, replacing: previousReader))
                previousReader = cursor.readerId
                let tail = try await client.subscribe(
                    NotificationsContract.tail, NotificationsTailRequest(after: cursor.cursor, readerId: cursor.readerId), credit: credit
                )
                cache.setLive(true)
                metrics.cacheLive(true)
                if failing {
                    logger.info("account cache live again")
                    failing = false
                }
                for try await delivery in tail {
                    cache.invalidate(accountId: delivery.event.accountId)
                    tail.acknowledge(delivery)
                    attempts.succeeded()
                }
            } catch {
                if Task.isCancelled { break }
                if !failing {
                    logger.warning("account cache off: cannot follow account events; retrying", metadata: ["konto.error": "\(error)"])
                    failing = true
                }
            }
            cache.setLive(false)
            metrics.cacheLive(false)
            try? await Task.sleep(for: attempts.failed())
        }
        cache.setLive(false)
        metrics.cacheLive(false)
    }
}
