import NIOCore
import Synchronization

/// Coalesces concurrent single-key lookups on one event loop into few batched ones (`WHERE key = ANY($1)`),
/// with no lock or task per call: its state lives on `eventLoop`, and each batch runs in one task of its own.
///
/// A call queues its key. While no batch is out, the first call of a tick schedules one for the end of that tick
/// (`EventLoop.execute`), so every request read in that tick shares it. While a batch is out, calls wait for it to
/// come back and then go out together, as the next batch. An idle service therefore answers with one query per call
/// and no added wait, and a busy one sends one query for many calls: the per-query costs of the driver and the
/// database are paid once per batch.
///
/// Each batch is sent after every one of its keys was asked for, so a call sees every write that committed before
/// it began, as a query of its own would.
///
/// Every call is bounded by its own `timeout` by one scheduled check on the loop (at the earliest deadline), not a
/// timer per call. A batch whose callers have all given up is abandoned: its answer is ignored and the next batch goes
/// out. When the last of them gave up because its deadline passed, the batch is taken to be stuck and its task is
/// cancelled (the lookup decides what that means, e.g. closing the connection it waits on); a batch whose callers
/// merely went away is left to finish.
public final class EventLoopBatchedLookup<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked: every mutable property below is touched on `eventLoop` only.

    /// Runs one batch, for distinct keys; keys it has no value for are answered `nil`. Its task is cancelled when
    /// the batch is abandoned at its callers' deadlines; it need not end promptly then, as nothing waits for it.
    public typealias Lookup = @Sendable (_ keys: [Key]) async throws -> [Key: Value]

    private struct Waiter {
        var id: UInt64
        var key: Key
        var deadline: NIODeadline
        var timeout: Duration
        var continuation: CheckedContinuation<Value?, any Error>
    }

    public let eventLoop: any EventLoop
    private let batchExecutor: (any TaskExecutor)?
    private let maxBatchSize: Int
    private let lookup: Lookup
    private let nextID = Atomic<UInt64>(0)

    private var queued: [Waiter] = []
    /// The batch out, if any: its number (to ignore an abandoned batch's late answer), its callers and its task.
    private var inFlight: (number: UInt64, waiters: [Waiter], task: Task<Void, Never>?)?
    private var batchScheduled = false
    private var batchNumber: UInt64 = 0
    /// Calls cancelled before they were queued (cancellation may overtake a hop to the loop).
    private var cancelledEarly: Set<UInt64> = []
    private static var cancelledEarlyLimit: Int { 1_024 }
    private var sweep: (at: NIODeadline, task: Scheduled<Void>)?

    /// - Parameter batchExecutor: where batch tasks run after their first suspension; an executor on `eventLoop`
    ///   saves the hops between the loop and the global executor. `nil`: the global executor.
    public init(eventLoop: any EventLoop, batchExecutor: (any TaskExecutor)? = nil, maxBatchSize: Int, lookup: @escaping Lookup) {
        precondition(maxBatchSize > 0, "a batched lookup needs room for one key")
        self.eventLoop = eventLoop
        self.batchExecutor = batchExecutor
        self.maxBatchSize = maxBatchSize
        self.lookup = lookup
    }

    /// Calls not answered yet (queued or in the batch out), for metrics and tests; read on the loop.
    public var waitingCount: EventLoopFuture<Int> {
        self.eventLoop.submit { self.queued.count + (self.inFlight?.waiters.count ?? 0) }
    }

    /// Whether a batch is out (and not abandoned), for metrics and tests; read on the loop.
    public var hasBatchInFlight: EventLoopFuture<Bool> {
        self.eventLoop.submit { self.inFlight != nil }
    }

    /// The value for `key`, or `nil` when the lookup found none. Cheapest when called on `eventLoop`.
    /// - Throws: the lookup's error (for every call in the failed batch), ``OperationTimeoutError`` once `timeout`
    ///   has passed, `CancellationError` when the calling task is cancelled.
    public func value(for key: Key, timeout: Duration) async throws -> Value? {
        let id = self.nextID.wrappingAdd(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value?, any Error>) in
                let deadline = NIODeadline.now() + TimeAmount(timeout)
                if self.eventLoop.inEventLoop {
                    self.enqueue(Waiter(id: id, key: key, deadline: deadline, timeout: timeout, continuation: continuation))
                } else {
                    self.eventLoop.execute {
                        self.enqueue(Waiter(id: id, key: key, deadline: deadline, timeout: timeout, continuation: continuation))
                    }
                }
            }
        } onCancel: {
            if self.eventLoop.inEventLoop {
                self.cancel(id)
            } else {
                self.eventLoop.execute { self.cancel(id) }
            }
        }
    }

    // MARK: On the loop

    private func enqueue(_ waiter: Waiter) {
        if self.cancelledEarly.remove(waiter.id) != nil {
            waiter.continuation.resume(throwing: CancellationError())
            return
        }
        self.queued.append(waiter)
        self.scheduleBatchIfIdle()
        if let sweep = self.sweep, sweep.at <= waiter.deadline {
            return
        }
        self.sweep?.task.cancel()
        self.scheduleSweep(at: waiter.deadline)
    }

    /// Sends the queued calls at the end of this tick, unless a batch is out (its answer sends them).
    private func scheduleBatchIfIdle() {
        guard self.inFlight == nil, !self.batchScheduled, !self.queued.isEmpty else { return }
        self.batchScheduled = true
        self.eventLoop.execute { self.sendBatch() }
    }

    private func sendBatch() {
        self.batchScheduled = false
        guard self.inFlight == nil, !self.queued.isEmpty else { return }
        let count = min(self.queued.count, self.maxBatchSize)
        let waiters = Array(self.queued.prefix(count))
        self.queued.removeFirst(count)
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var seen = Set<Key>(minimumCapacity: count)
        for waiter in waiters where seen.insert(waiter.key).inserted {
            keys.append(waiter.key)
        }
        self.batchNumber += 1
        let number = self.batchNumber
        self.inFlight = (number, waiters, nil)
        // Started right here, on the loop, up to its first suspension, saving a hop.
        let task = Task.immediate(executorPreference: self.batchExecutor) { [lookup, eventLoop] in
            let result: Result<[Key: Value], any Error>
            do {
                result = .success(try await lookup(keys))
            } catch {
                result = .failure(error)
            }
            if eventLoop.inEventLoop {
                self.finish(number, result)
            } else {
                eventLoop.execute { self.finish(number, result) }
            }
        }
        if self.inFlight?.number == number {
            self.inFlight?.task = task
        }
    }

    private func finish(_ number: UInt64, _ result: Result<[Key: Value], any Error>) {
        guard let inFlight = self.inFlight, inFlight.number == number else { return }
        self.inFlight = nil
        switch result {
        case .success(let values):
            for waiter in inFlight.waiters {
                waiter.continuation.resume(returning: values[waiter.key])
            }
        case .failure(let error):
            for waiter in inFlight.waiters {
                waiter.continuation.resume(throwing: error)
            }
        }
        self.scheduleBatchIfIdle()
    }

    private func cancel(_ id: UInt64) {
        if let index = self.queued.firstIndex(where: { $0.id == id }) {
            self.queued.remove(at: index).continuation.resume(throwing: CancellationError())
        } else if let index = self.inFlight?.waiters.firstIndex(where: { $0.id == id }) {
            self.inFlight!.waiters.remove(at: index).continuation.resume(throwing: CancellationError())
            self.abandonBatchIfUnwanted(stuck: false)
        } else {
            // Not queued yet (its hop to the loop is behind this one), or answered already. The latter would never
            // be removed, so the set is dropped when it grows: an early cancellation lost that way still ends at
            // its call's deadline.
            if self.cancelledEarly.count >= Self.cancelledEarlyLimit {
                self.cancelledEarly.removeAll()
            }
            self.cancelledEarly.insert(id)
        }
    }

    /// A batch nobody waits for any more no longer holds up the next one; a stuck one is told to stop.
    private func abandonBatchIfUnwanted(stuck: Bool) {
        if let inFlight = self.inFlight, inFlight.waiters.isEmpty {
            self.inFlight = nil
            if stuck {
                inFlight.task?.cancel()
            }
            self.scheduleBatchIfIdle()
        }
    }

    // MARK: Deadlines

    private func scheduleSweep(at deadline: NIODeadline) {
        let task = self.eventLoop.scheduleTask(deadline: deadline) { self.sweepDue() }
        self.sweep = (deadline, task)
    }

    private func sweepDue() {
        self.sweep = nil
        let now = NIODeadline.now()
        var expired: [Waiter] = []
        self.queued.removeAll { waiter in
            guard waiter.deadline <= now else { return false }
            expired.append(waiter)
            return true
        }
        self.inFlight?.waiters.removeAll { waiter in
            guard waiter.deadline <= now else { return false }
            expired.append(waiter)
            return true
        }
        for waiter in expired {
            waiter.continuation.resume(throwing: OperationTimeoutError(timeout: waiter.timeout))
        }
        self.abandonBatchIfUnwanted(stuck: !expired.isEmpty)
        let earliest = (self.queued.map(\.deadline) + (self.inFlight?.waiters.map(\.deadline) ?? [])).min()
        if let earliest {
            self.scheduleSweep(at: earliest)
        }
    }
}
