import Foundation
import KontoContracts
import KontoModel
import KontoPostgres
import KontoRuntime
import KontoWire
import Logging

/// Cache-holding tail readers and the barrier that waits for them: how a gateway's answer to a logout, a password
/// change or a deletion comes only after every other gateway's cache has dropped the account (docs/SCALING.md,
/// "Caches across gateways").
///
/// A reader is registered (leased) when it takes its cursor, before its cache goes live. The replica serving its tail
/// records the place up to which it has acknowledged every event and renews its lease; it ends the tail when the
/// reader leaves an event unacknowledged past ``NotificationOptions/tailAcknowledgementDeadline`` or the lease cannot be
/// renewed, and removes the reader when the tail ends. A barrier waits, for the readers live when it was called, until
/// each has acknowledged the change's events, or its tail started after them, or its lease ended.
extension NotificationStore {
    func serveReader(_ reader: UUID, start: TailCursor, subscriber: WireSubscriber<AccountEvent>) async throws {
        // Vouch for it now: a reader that was never registered, or whose lease ended, is refused (it must take a new
        // cursor, as its cache may have missed a barrier meanwhile).
        let now = clock()
        let vouchedAt = ContinuousClock.now
        guard try await stored({ () async throws(NotificationStorageError) in
            try await storage.renewTailReader(reader, acknowledged: nil, leaseUntil: now.adding(options.tailReaderLease), at: now)
        }) else {
            throw ServiceError.notificationsInvalidRequest("readerId must be a live reader from notifications.tailCursor")
        }
        let progress = TailReaderProgress()
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    try await self.serveStream(
                        from: start, to: subscriber, recheckAfterPublish: true,
                        onPush: { delivery, cursor in progress.pushed(delivery, cursor: cursor, at: .now) },
                        onOutcome: { progress.settled($0) }
                    ) { cursor, limit async throws(NotificationStorageError) in
                        try await self.storage.tail(after: cursor, types: nil, limit: limit).map { ($0.cursor, $0.event) }
                    }
                }
                tasks.addTask { try await self.vouch(for: reader, progress: progress, renewedAt: vouchedAt) }
                // Either ending ends the tail: the subscriber went, or the reader is no longer vouched for.
                try await tasks.next()
                tasks.cancelAll()
            }
        } catch {
            forget(reader)
            throw error
        }
        forget(reader)
    }

    /// Records the reader's acknowledged place as it moves and renews its lease; returns (ending the tail) when the
    /// reader is too slow, its lease is gone, or a renewal fails or is late.
    private func vouch(for reader: UUID, progress: TailReaderProgress, renewedAt: ContinuousClock.Instant) async throws {
        var renewed = renewedAt
        while !Task.isCancelled {
            let generation = progress.moved.generation
            let now = ContinuousClock.now
            if let waited = progress.oldestWait(at: now), waited > options.tailAcknowledgementDeadline {
                logger.warning("tail reader too slow to acknowledge; ending its tail", metadata: ["konto.reader_id": "\(reader)"])
                return
            }
            let acknowledged = progress.unrecorded
            if acknowledged != nil || now - renewed >= options.tailReaderRenewal {
                // The lease vouched for last ends at `renewed + lease` (the row's, by a clock read before that call).
                // A renewal that cannot finish a renewal interval before then ends the tail: a barrier may stop
                // waiting for the reader once its lease ends, so the reader's cache must not outlive it.
                let budget = renewed + options.tailReaderLease - now - options.tailReaderRenewal
                let at = clock()
                let (storage, lease) = (storage, options.tailReaderLease)
                let live: Bool
                do {
                    guard budget > .zero else { throw OperationTimeoutError(timeout: .zero) }
                    live = try await OperationTimeout.run(budget) {
                        try await storage.renewTailReader(reader, acknowledged: acknowledged, leaseUntil: at.adding(lease), at: at)
                    }
                } catch {
                    logger.warning("tail reader's lease not renewed in time; ending its tail", metadata: [
                        "konto.reader_id": "\(reader)", "konto.error": "\(String(describing: type(of: error)))",
                    ])
                    return
                }
                guard live else {
                    logger.warning("tail reader's lease ended; ending its tail", metadata: ["konto.reader_id": "\(reader)"])
                    return
                }
                if let acknowledged { progress.recorded(acknowledged) }
                renewed = now
                continue
            }
            // Until the place moves, the next renewal, or the next look at the oldest unacknowledged event.
            let untilRenewal = options.tailReaderRenewal - (now - renewed)
            await progress.moved.wait(after: generation, timeout: min(untilRenewal, options.tailAcknowledgementDeadline / 4))
        }
    }

    /// Removes the reader, even when the tail ended because its task was cancelled (a shutdown): left in place it
    /// would be waited for until its lease ends. Not awaited: the tail's end must reach the reader at once, also when
    /// the storage is what made it end (a removal then waits as long as the renewal would have).
    private func forget(_ reader: UUID) {
        let storage = storage
        Task { try? await storage.removeTailReader(reader) }
    }

    /// Waits until every reader live at the call has acknowledged the events, or its tail started after them, or its
    /// lease ended; at most the request's timeout.
    public func tailBarrier(_ request: NotificationsTailBarrierRequest) async throws(ServiceError) -> NotificationsTailBarrier {
        guard (1...NotificationsContract.maximumBarrierEvents).contains(request.eventIds.count) else {
            throw .notificationsInvalidRequest("eventIds lists 1 to \(NotificationsContract.maximumBarrierEvents) events")
        }
        guard (0...NotificationsContract.maximumBarrierTimeoutMilliseconds).contains(request.timeoutMilliseconds) else {
            throw .notificationsInvalidRequest("timeoutMilliseconds is 0 to \(NotificationsContract.maximumBarrierTimeoutMilliseconds)")
        }
        let deadline = ContinuousClock.now + .milliseconds(request.timeoutMilliseconds)
        // Readers registered after this took their cursor after the change had committed: what they read has it.
        let readers = try await stored { () async throws(NotificationStorageError) in try await storage.liveTailReaders(at: clock()) }
        guard !readers.isEmpty else { return NotificationsTailBarrier(complete: true, readersBehind: 0) }
        while true {
            let generation = published.generation
            let behind = try await stored { () async throws(NotificationStorageError) in
                try await storage.tailReadersBehind(readers, eventIds: request.eventIds, at: clock())
            }
            if behind == 0 { return NotificationsTailBarrier(complete: true, readersBehind: 0) }
            let now = ContinuousClock.now
            guard now < deadline, !Task.isCancelled else {
                return NotificationsTailBarrier(complete: false, readersBehind: behind ?? readers.count)
            }
            // Events stored here or by any replica wake this at once; acknowledgements recorded by other replicas
            // are looked for every few milliseconds (a barrier lasts about as long as a tail takes to deliver).
            await published.wait(after: generation, timeout: min(Self.barrierRecheck, deadline - now))
        }
    }

    static var barrierRecheck: Duration { .milliseconds(5) }
}
