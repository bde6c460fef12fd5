import Foundation
import KontoContracts
import KontoModel
import KontoRuntime
import KontoWire
import Logging
import Synchronization

extension NotificationStore {
    /// Serves one consumer of a group until the subscription ends: claims due deliveries within the free credit,
    /// pushes them, and settles each by its ack. Whatever is unsettled at the end is released to the group.
    public func serveGroup(_ request: NotificationsSubscribeRequest, caller: String? = nil, subscriber: WireSubscriber<AccountEvent>) async throws {
        _ = try await declareGroup(request, caller: caller)
        let ledger = DeliveryLedger()
        let settled = Wakeup()
        let group = request.group
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    try await self.pushDeliveries(group: group, subscriber: subscriber, ledger: ledger, settled: settled)
                }
                tasks.addTask {
                    for await outcome in subscriber.outcomes {
                        // Whatever else has arrived meanwhile is settled with it: the acks in one statement.
                        let batch = [outcome] + subscriber.subscription.takeReadyOutcomes(max: 255)
                        var processed: [ClaimedDelivery] = []
                        for outcome in batch {
                            guard let delivery = ledger.settle(outcome) else { continue }
                            if case .processed = outcome.disposition {
                                processed.append(delivery)
                            } else {
                                await self.settle(delivery, outcome.disposition)
                            }
                        }
                        await self.acknowledge(processed)
                        settled.notify()
                    }
                }
                // The outcomes end with the subscription; the pusher is then cancelled.
                try await tasks.next()
                tasks.cancelAll()
                try await tasks.waitForAll()
            }
        } catch {
            await release(ledger.drain())
            throw error
        }
        await release(ledger.drain())
    }

    /// Creates the group, or checks that it exists with the same types; where groups are owned, it is `caller`'s
    /// (nil: Notifications' own, its courier's and webhooks'), and another's is refused `wire.forbidden`. A caller's
    /// group is named `<caller>.<name>` (``ownGroupPrefix(of:)``), so no caller can take a name another service, or
    /// Notifications itself (`mail`, `webhook:<name>`), will declare later.
    public func declareGroup(_ request: NotificationsSubscribeRequest, caller: String? = nil) async throws(ServiceError) -> NotificationsGroupDeclared {
        try Self.checkGroupName(request.group)
        if ownership.groupsOwned, let caller, !request.group.hasPrefix(Self.ownGroupPrefix(of: caller)) {
            // A group named before names carried their owner stays its owner's (and only its owner's).
            let owner = try await stored { () async throws(NotificationStorageError) in try await storage.groupOwner(request.group) }
            guard case .some(.some(let existing)) = owner, existing == caller else {
                throw .notificationsForbidden("a group of '\(caller.prefix(64))' is named '\(Self.ownGroupPrefix(of: caller).prefix(65))…', which '\(request.group)' is not")
            }
        }
        let types = try Self.checkTypes(request.types)
        // A caller's group holds only the types it may read (every type, with none named, is more than any may).
        if let caller, let readable = ownership.readable(by: caller) {
            let beyond = Set(types ?? Array(NotificationsContract.eventTypes)).subtracting(readable)
            guard beyond.isEmpty else {
                throw .notificationsForbidden(
                    "'\(caller.prefix(64))' may not read \(types == nil ? "every event type: name the types" : beyond.sorted().joined(separator: ", ")) (readable: \(readable.sorted().joined(separator: ", ")))"
                )
            }
        }
        let owner = ownership.groupsOwned ? (caller ?? NotificationsContract.serviceName) : nil
        let outcome = try await stored { () async throws(NotificationStorageError) in
            try await storage.ensureGroup(request.group, types: types, owner: owner, at: clock())
        }
        guard outcome != .foreign else { throw .notificationsForbidden("consumer group '\(request.group)' belongs to another service") }
        guard outcome != .mismatch else { throw .groupMismatch(request.group) }
        if outcome == .created {
            logger.info("consumer group created", metadata: ["konto.group": "\(request.group)"])
        }
        return NotificationsGroupDeclared(created: outcome == .created)
    }

    private func pushDeliveries(group: String, subscriber: WireSubscriber<AccountEvent>, ledger: DeliveryLedger, settled: Wakeup) async throws {
        while !Task.isCancelled {
            let settledGeneration = settled.generation
            let room = subscriber.credit - ledger.outstanding
            guard room > 0 else {
                await settled.wait(after: settledGeneration, timeout: options.pollInterval)
                continue
            }
            let publishedGeneration = published.generation
            let now = clock()
            let claims = try await stored { () async throws(NotificationStorageError) in
                try await storage.claim(group: group, limit: min(room, options.claimBatch), at: now, visibility: options.visibilityTimeout, maxAttempts: options.maxAttempts)
            }
            guard !claims.isEmpty else {
                await published.wait(after: publishedGeneration, timeout: try await idleWait(group: group, now: now))
                continue
            }
            for delivery in claims {
                let id: UInt64
                do {
                    id = try await subscriber.push(delivery.event, topic: delivery.event.kind.name)
                } catch {
                    // Not sent: give it straight back to the group.
                    await release([delivery])
                    throw error
                }
                if let early = ledger.record(id, delivery) {
                    await settle(delivery, early)
                }
            }
        }
    }

    /// How long an idle consumer waits: until the group's next delivery falls due, at most the poll interval.
    func idleWait(group: String, now: Timestamp) async throws -> Duration {
        let next = try await stored { () async throws(NotificationStorageError) in try await storage.nextDue(group: group) }
        guard let next else { return options.pollInterval }
        let until = Duration.milliseconds(max(next.milliseconds - now.milliseconds, 5))
        return min(until, options.pollInterval)
    }

    /// Applies a consumer's outcome to the storage. A failure is logged, not thrown: the claim then times out and
    /// the event is delivered again (at least once).
    private func settle(_ delivery: ClaimedDelivery, _ disposition: WireAck.Disposition) async {
        let now = clock()
        do {
            switch disposition {
            case .processed:
                _ = try await storage.acknowledge(delivery.claim)
            case .retry(let reason):
                let retryAt = now.adding(options.retryDelay(afterAttempts: delivery.attempts))
                let outcome = try await storage.retry(delivery.claim, reason: reason, retryAt: retryAt, maxAttempts: options.maxAttempts, at: now)
                if outcome == .deadLettered {
                    logger.warning("event dead-lettered after its last retry", metadata: Self.metadata(delivery))
                }
            case .reject(let reason):
                _ = try await storage.reject(delivery.claim, reason: reason, at: now)
                logger.warning("event rejected by its consumer", metadata: Self.metadata(delivery))
            }
        } catch {
            logger.warning("event outcome not stored", metadata: Self.metadata(delivery).merging(["konto.error": "\(error)"]) { $1 })
        }
    }

    /// Acknowledges processed deliveries in one statement; a failure is logged (their claims time out and the
    /// events are delivered again).
    private func acknowledge(_ deliveries: [ClaimedDelivery]) async {
        guard !deliveries.isEmpty else { return }
        do {
            _ = try await storage.acknowledge(deliveries.map(\.claim))
        } catch {
            logger.warning("event acks not stored", metadata: ["konto.count": "\(deliveries.count)", "konto.error": "\(error)"])
        }
    }

    /// Gives unsettled claims back to their group, due at once. Runs outside the (cancelled) subscription's task, so
    /// the storage calls are not cancelled with it.
    private func release(_ deliveries: [ClaimedDelivery]) async {
        guard !deliveries.isEmpty else { return }
        let storage = self.storage
        let now = clock()
        let logger = self.logger
        await Task {
            for delivery in deliveries {
                do {
                    try await storage.release(delivery.claim, at: now)
                } catch {
                    // The claim times out instead.
                    logger.warning("claim not released", metadata: Self.metadata(delivery))
                }
            }
        }.value
        published.notify()
    }

    static func metadata(_ delivery: ClaimedDelivery) -> Logger.Metadata {
        [
            "konto.group": "\(delivery.claim.group)",
            "konto.event_id": "\(delivery.event.id)",
            "konto.account_id": "\(delivery.event.accountId)",
            "konto.attempts": "\(delivery.attempts)",
        ]
    }

    /// The types sorted and deduplicated; nil (every type) stays nil.
    static func checkTypes(_ types: [String]?) throws(ServiceError) -> [String]? {
        guard let types else { return nil }
        guard !types.isEmpty else { throw .notificationsInvalidRequest("types is nil for every type, or lists at least one") }
        for type in types where !NotificationsContract.eventTypes.contains(type) {
            throw .notificationsInvalidRequest("unknown event type '\(type.prefix(64))'")
        }
        return Array(Set(types)).sorted()
    }

    // MARK: Feed

    /// Serves one account's events after `request.after` (or after `afterCursor`, else from its first), then new
    /// ones as they are stored, within the credit, in the tail's order (an event committed after a later-numbered one
    /// is not skipped).
    public func serveFeed(_ request: NotificationsFeedRequest, subscriber: WireSubscriber<AccountEvent>) async throws {
        guard !request.accountId.isEmpty, request.accountId.utf8.count <= 255 else {
            throw ServiceError.notificationsInvalidRequest("an accountId has 1 to 255 bytes")
        }
        var start: TailCursor? = nil
        if let after = request.after {
            start = try await stored { () async throws(NotificationStorageError) in
                try await storage.cursor(ofEvent: after, accountId: request.accountId)
            }
            guard start != nil else { throw ServiceError.unknownEvent }
        } else if let text = request.afterCursor {
            guard let cursor = TailCursor(text) else {
                throw ServiceError.notificationsInvalidRequest("afterCursor must be a cursor from notifications.tailCursor")
            }
            start = cursor
        }
        try await serveStream(from: start, to: subscriber, recheckAfterPublish: true) { cursor, limit async throws(NotificationStorageError) in
            try await self.storage.accountEvents(accountId: request.accountId, after: cursor, limit: limit).map { ($0.cursor, $0.event) }
        }
    }
}

extension NotificationStore {
    // MARK: Tail

    /// Where a tail starts now; for a reader that holds a cache, also registers it (leased), so barriers wait for it
    /// from now on: before its cache goes live.
    public func tailCursor(_ request: NotificationsTailCursorRequest = NotificationsTailCursorRequest()) async throws(ServiceError) -> NotificationsTailCursor {
        let cursor = try await stored { () async throws(NotificationStorageError) in try await storage.tailCursor() }
        guard request.holdsCache == true else { return NotificationsTailCursor(cursor: cursor.description) }
        let reader = UUID()
        let now = clock()
        try await stored { () async throws(NotificationStorageError) in
            if let replaced = request.replacing {
                try await storage.removeTailReader(replaced)
            }
            try await storage.registerTailReader(reader, start: cursor, leaseUntil: now.adding(options.tailReaderLease), at: now)
        }
        return NotificationsTailCursor(cursor: cursor.description, readerId: reader)
    }

    /// Serves every account's events after the request's cursor, then new ones as they are stored, within the
    /// credit. Nothing is kept for a plain subscriber: a tail that ends is started again from a new cursor. A
    /// cache-holding reader's acknowledgements are recorded and its lease renewed while the tail runs
    /// (``serveReader(_:start:subscriber:)``).
    public func serveTail(_ request: NotificationsTailRequest, subscriber: WireSubscriber<AccountEvent>) async throws {
        guard let start = TailCursor(request.after) else {
            throw ServiceError.notificationsInvalidRequest("after must be a cursor from notifications.tailCursor")
        }
        let types = try Self.checkTypes(request.types)
        if let reader = request.readerId {
            guard types == nil else { throw ServiceError.notificationsInvalidRequest("a reader that holds a cache tails every type") }
            return try await serveReader(reader, start: start, subscriber: subscriber)
        }
        try await serveStream(from: start, to: subscriber, recheckAfterPublish: true) { cursor, limit async throws(NotificationStorageError) in
            try await self.storage.tail(after: cursor, types: types, limit: limit).map { ($0.cursor, $0.event) }
        }
    }

    /// Pushes what `read` gives after the last pushed cursor, then new events as they are stored, never more
    /// unacknowledged than the subscriber's credit: a feed's and a tail's loop. With `recheckAfterPublish`, a read
    /// that finds nothing after a publish looks again soon (a tail's events settle only when older transactions
    /// end) instead of after the whole poll interval.
    func serveStream<Cursor: Sendable>(
        from start: Cursor,
        to subscriber: WireSubscriber<AccountEvent>,
        recheckAfterPublish: Bool,
        onPush: (@Sendable (_ delivery: UInt64, _ cursor: Cursor) -> Void)? = nil,
        onOutcome: (@Sendable (WireDeliveryOutcome) -> Void)? = nil,
        read: @escaping @Sendable (Cursor, Int) async throws(NotificationStorageError) -> [(Cursor, AccountEvent)]
    ) async throws {
        let unsettled = Unsettled()
        let settled = Wakeup()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await outcome in subscriber.outcomes {
                    onOutcome?(outcome)
                    unsettled.subtract()
                    settled.notify()
                }
            }
            tasks.addTask {
                var cursor = start
                var rechecks = 0
                while !Task.isCancelled {
                    let settledGeneration = settled.generation
                    let room = subscriber.credit - unsettled.count
                    guard room > 0 else {
                        await settled.wait(after: settledGeneration, timeout: self.options.pollInterval)
                        continue
                    }
                    let publishedGeneration = self.published.generation
                    let events = try await self.stored { () async throws(NotificationStorageError) in
                        try await read(cursor, min(room, self.options.claimBatch))
                    }
                    guard !events.isEmpty else {
                        let wait = rechecks > 0 ? min(Self.tailRecheck, self.options.pollInterval) : self.options.pollInterval
                        await self.published.wait(after: publishedGeneration, timeout: wait)
                        let republished = recheckAfterPublish && self.published.generation != publishedGeneration
                        rechecks = republished ? Self.tailRechecks : max(rechecks - 1, 0)
                        continue
                    }
                    rechecks = 0
                    for (next, event) in events {
                        unsettled.add()
                        let delivery = try await subscriber.push(event, topic: event.kind.name)
                        onPush?(delivery, next)
                        cursor = next
                    }
                }
            }
            try await tasks.next()
            tasks.cancelAll()
            try await tasks.waitForAll()
        }
    }

    /// After a publish, how often and how long a tail looks again for events that were not settled yet.
    static var tailRecheck: Duration { .milliseconds(10) }
    static var tailRechecks: Int { 20 }
}

/// Events a feed has pushed and not seen acknowledged.
private final class Unsettled: Sendable {
    private let value = Atomic<Int>(0)
    var count: Int { value.load(ordering: .relaxed) }
    func add() { value.add(1, ordering: .relaxed) }
    func subtract() { value.subtract(1, ordering: .relaxed) }
}
