import KontoContracts
import KontoModel
import KontoRuntime
import Logging
import Synchronization

/// What an in-service worker (a webhook endpoint, the mail courier) made of one delivery.
enum DeliveryOutcome: Sendable, Equatable {
    case delivered
    /// Try again after the back-off (dead letter once the attempts are used up).
    case retry(String)
    /// Retrying cannot help: dead letter now.
    case deadLetter(String)
}

/// How a worker's delivery ended in storage, for its metrics.
enum DeliverySettlement: Sendable, Equatable {
    case delivered, retried, deadLettered
}

extension NotificationStore {
    /// Serves `group` inside Notifications until cancelled: declares it for `types` (unless `declares` is false: a
    /// group made with what it serves, which must not come back once removed), then keeps up to `concurrency`
    /// deliveries in flight, claiming more as each is settled by `deliver`'s outcome. Claims hold at most one
    /// delivery per account, so the ones in flight may go out in parallel and each account's still arrive in order.
    /// A claim's visibility should outlast `deliver`; a delivery whose outcome is not stored is claimed again once
    /// it times out (at least once).
    func work(
        group: String,
        types: [String]?,
        declares: Bool = true,
        concurrency: Int,
        visibility: Duration,
        logger: Logger,
        deliver: @escaping @Sendable (ClaimedDelivery) async -> DeliveryOutcome,
        settled: @escaping @Sendable (ClaimedDelivery, DeliverySettlement) -> Void = { _, _ in }
    ) async {
        // Declared before anything else, so events stored from now on are queued for the group.
        while declares && !Task.isCancelled {
            do {
                _ = try await declareGroup(NotificationsSubscribeRequest(group: group, types: types))
                break
            } catch {
                logger.warning("group cannot be declared; retrying", metadata: ["konto.error": "\(error)"])
                try? await Task.sleep(for: options.pollInterval)
            }
        }
        let inFlight = InFlightCount()
        // Claimed ahead, up to `concurrency` more than are in flight: a slot that frees takes its next delivery at
        // once instead of waiting for a claim's round trip (measured: claiming one at a time as slots freed held the
        // courier to a third of what its SMTP sessions could carry, `konto-bench mail`). Their claims' visibility
        // covers the wait; a worker stopped with some still here leaves them to time out and go again.
        let ahead = ClaimedAhead()
        // Notified as each delivery is settled: room for another, or an account's next event now claimable.
        let finished = Wakeup()
        // Deliveries done and not yet acknowledged: stored together, one statement for all of them, while the slots
        // go on (measured: a slot waiting for its own ack cost as much as the mail). Until their ack is stored an
        // account's next event is not claimed; one lost in a crash goes again after its claim's timeout.
        let acks = PendingAcks()
        await withDiscardingTaskGroup { tasks in
            tasks.addTask {
                while true {
                    let generation = acks.wakeup.generation
                    let batch = acks.takeAll()
                    guard !batch.isEmpty else {
                        // Done once nothing is in flight any more that could still add one.
                        if Task.isCancelled {
                            if inFlight.value == 0 { return }
                            await Task.yield()
                        } else {
                            await acks.wakeup.wait(after: generation, timeout: self.options.pollInterval)
                        }
                        continue
                    }
                    do {
                        _ = try await self.storage.acknowledge(batch.map(\.claim))
                        for delivery in batch { settled(delivery, .delivered) }
                    } catch {
                        logger.warning("delivery outcomes not stored", metadata: ["konto.deliveries": "\(batch.count)", "konto.error": "\(error)"])
                    }
                    finished.notify()
                }
            }
            while !Task.isCancelled {
                let publishedGeneration = published.generation
                let finishedGeneration = finished.generation
                let room = concurrency - inFlight.value
                if room > 0, case let next = ahead.take(room), !next.isEmpty {
                    inFlight.add(next.count)
                    for delivery in next {
                        tasks.addTask {
                            // Settled, the slot goes on with the next delivery claimed ahead, if any.
                            var current: ClaimedDelivery? = delivery
                            while let delivery = current {
                                let outcome = await deliver(delivery)
                                if outcome == .delivered {
                                    acks.add(delivery)
                                } else {
                                    let settlement = await self.settle(delivery, outcome, logger: logger)
                                    if let settlement { settled(delivery, settlement) }
                                }
                                current = Task.isCancelled ? nil : ahead.take(1).first
                                if current == nil { inFlight.add(-1) }
                                finished.notify()
                            }
                        }
                    }
                    continue
                }
                let wanted = 2 * concurrency - inFlight.value - ahead.count
                guard wanted > 0 else {
                    await finished.wait(after: finishedGeneration, timeout: options.pollInterval)
                    continue
                }
                let now = clock()
                let claims: [ClaimedDelivery]
                do {
                    claims = try await storage.claim(group: group, limit: wanted, at: now, visibility: visibility, maxAttempts: options.maxAttempts)
                } catch {
                    logger.warning("deliveries cannot be claimed", metadata: ["konto.error": "\(error)"])
                    try? await Task.sleep(for: options.pollInterval)
                    continue
                }
                guard !claims.isEmpty else {
                    let wait = (try? await idleWait(group: group, now: now)) ?? options.pollInterval
                    await Self.firstOf(published, after: publishedGeneration, finished, after: finishedGeneration, timeout: wait)
                    continue
                }
                ahead.add(claims)
            }
        }
    }

    /// Stores a worker's outcome; nil when it could not be stored (the claim times out and the event goes again).
    private func settle(_ delivery: ClaimedDelivery, _ outcome: DeliveryOutcome, logger: Logger) async -> DeliverySettlement? {
        let now = clock()
        do {
            switch outcome {
            case .delivered:
                _ = try await storage.acknowledge(delivery.claim)
                return .delivered
            case .retry(let reason):
                let retryAt = now.adding(options.retryDelay(afterAttempts: delivery.attempts))
                let stored = try await storage.retry(delivery.claim, reason: reason, retryAt: retryAt, maxAttempts: options.maxAttempts, at: now)
                return stored == .deadLettered ? .deadLettered : .retried
            case .deadLetter(let reason):
                _ = try await storage.reject(delivery.claim, reason: reason, at: now)
                return .deadLettered
            }
        } catch {
            logger.warning("delivery outcome not stored", metadata: ["konto.event_id": "\(delivery.event.id)", "konto.error": "\(error)"])
            return nil
        }
    }

    /// Returns once either wakeup is notified after its generation, or after `timeout`.
    private static func firstOf(_ first: Wakeup, after firstGeneration: UInt64, _ second: Wakeup, after secondGeneration: UInt64, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { race in
            race.addTask { await first.wait(after: firstGeneration, timeout: timeout) }
            race.addTask { await second.wait(after: secondGeneration, timeout: timeout) }
            await race.next()
            race.cancelAll()
        }
    }
}

/// Deliveries done and waiting for their acknowledgement to be stored.
private final class PendingAcks: Sendable {
    private let deliveries = Mutex<[ClaimedDelivery]>([])
    let wakeup = Wakeup()
    func add(_ delivery: ClaimedDelivery) {
        deliveries.withLock { $0.append(delivery) }
        wakeup.notify()
    }
    func takeAll() -> [ClaimedDelivery] {
        deliveries.withLock { deliveries in
            defer { deliveries = [] }
            return deliveries
        }
    }
}

/// Deliveries claimed and not yet started, oldest first, shared by the claiming loop and the slots.
private final class ClaimedAhead: Sendable {
    private let claims = Mutex<[ClaimedDelivery]>([])
    var count: Int { claims.withLock { $0.count } }
    func add(_ more: [ClaimedDelivery]) { claims.withLock { $0 += more } }
    func take(_ limit: Int) -> [ClaimedDelivery] {
        claims.withLock { claims in
            let taken = Array(claims.prefix(limit))
            claims.removeFirst(taken.count)
            return taken
        }
    }
}

/// Deliveries a worker has in flight, shared with the tasks that settle them.
private final class InFlightCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func add(_ delta: Int) { count.add(delta, ordering: .acquiringAndReleasing) }
}
