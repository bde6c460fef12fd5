import Synchronization

/// Coalesces concurrent single-key lookups into few batched ones (`WHERE key = ANY($1)`).
///
/// A lookup queues its key, and starts a batch task while fewer than `maxConcurrentBatches` are
/// running. A batch task takes everything queued (up to `maxBatchSize`) only once it runs, and
/// yields once before each batch, so the calls that became ready together (the requests read in one
/// event loop tick, when the executor is that loop) share one query; after its query it takes the
/// next batch, until nothing is queued. An idle service therefore answers with one query per call
/// and no timer or added wait, and a busy one sends one query for many calls: the per-query costs
/// of the driver and the database (protocol messages, a round trip, thread hops) are paid once per
/// batch instead of once per call.
///
/// Each batch starts after every one of its keys was asked for, so a call sees every write that
/// committed before it began, as a query of its own would.
///
/// Every call is bounded by its own `timeout` without a task or timer per call: one sweeper task
/// exists while anything is waiting or running and wakes at the earliest deadline. It fails the
/// calls that are due and gives up on a batch once all its callers' deadlines have passed, so a
/// query stuck on a half-dead connection frees its place for the batches after it.
public final class BatchedLookup<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    public typealias Lookup = @Sendable (_ keys: [Key]) async throws -> [Key: Value]

    private struct Waiter {
        var key: Key
        var deadline: ContinuousClock.Instant
        var timeout: Duration
        var continuation: CheckedContinuation<Value?, any Error>
    }

    private typealias Batch = [(id: UInt64, key: Key)]

    private struct State {
        /// Every call not yet answered, queued or in a running batch.
        var waiting: [UInt64: Waiter] = [:]
        /// Calls not yet taken by a batch, oldest first.
        var queued: [UInt64] = []
        /// Batch tasks holding a place, and when the last caller of their current batch gives up.
        var running: [UInt64: ContinuousClock.Instant] = [:]
        var nextID: UInt64 = 0
        var sweeping = false
    }

    private let maxConcurrentBatches: Int
    private let maxBatchSize: Int
    private let executor: @Sendable () -> (any TaskExecutor)?
    private let lookup: Lookup
    private let state = Mutex(State())

    /// - Parameter executor: where a batch's task runs, asked when it starts (`nil`: the global
    ///   executor). Running it on the caller's event loop saves thread wake-ups on the way back.
    public init(
        maxConcurrentBatches: Int,
        maxBatchSize: Int,
        executor: @escaping @Sendable () -> (any TaskExecutor)? = { nil },
        lookup: @escaping Lookup
    ) {
        precondition(maxConcurrentBatches > 0 && maxBatchSize > 0, "a batched lookup needs room for one batch of one key")
        self.maxConcurrentBatches = maxConcurrentBatches
        self.maxBatchSize = maxBatchSize
        self.executor = executor
        self.lookup = lookup
    }

    /// Calls not answered yet (queued or in a running batch): a gauge for metrics and tests.
    public var waitingCount: Int {
        self.state.withLock { $0.waiting.count }
    }

    /// The value for `key`, or `nil` when the lookup found none.
    /// - Throws: the lookup's error (for every call in the failed batch), ``OperationTimeoutError``
    ///   once `timeout` has passed, `CancellationError` when the calling task is cancelled.
    public func value(for key: Key, timeout: Duration) async throws -> Value? {
        let id = self.state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value?, any Error>) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let waiter = Waiter(key: key, deadline: .now + timeout, timeout: timeout, continuation: continuation)
                let (place, startSweeper) = self.state.withLock { state in
                    state.waiting[id] = waiter
                    state.queued.append(id)
                    return (self.reservePlaceIfRoom(&state, until: waiter.deadline), self.claimSweeper(&state))
                }
                if let place {
                    self.start(place)
                }
                if startSweeper {
                    Task { await self.sweep() }
                }
            }
        } onCancel: {
            let waiter = self.state.withLock { $0.waiting.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    // MARK: Batches (every helper taking `inout State` runs under the lock)

    private func claimSweeper(_ state: inout State) -> Bool {
        defer { state.sweeping = true }
        return !state.sweeping
    }

    /// Reserves a place for a batch task if one may start now: the task takes its keys when it runs.
    private func reservePlaceIfRoom(_ state: inout State, until deadline: ContinuousClock.Instant) -> UInt64? {
        guard state.running.count < self.maxConcurrentBatches, !state.queued.isEmpty else { return nil }
        state.nextID += 1
        state.running[state.nextID] = deadline
        return state.nextID
    }

    /// Queued calls still waiting, oldest first, at most `maxBatchSize`; the place's deadline becomes theirs.
    private func takeBatch(_ state: inout State, place: UInt64) -> Batch {
        var batch: Batch = []
        var deadline: ContinuousClock.Instant?
        var taken = 0
        for id in state.queued {
            taken += 1
            if let waiter = state.waiting[id] {
                batch.append((id, waiter.key))
                deadline = max(deadline ?? waiter.deadline, waiter.deadline)
                if batch.count == self.maxBatchSize { break }
            }
        }
        state.queued.removeFirst(taken)
        if let deadline {
            state.running[place] = deadline
        }
        return batch
    }

    private func start(_ place: UInt64) {
        Task(executorPreference: self.executor()) {
            await self.run(place)
        }
    }

    /// Runs batches until nothing is queued, or until its place was given up on.
    private func run(_ place: UInt64) async {
        var first = true
        while true {
            // Behind whatever is ready on the executor now, so calls made in the same tick join this
            // batch; a new task starts behind it already.
            if !first {
                await Task.yield()
            }
            first = false
            let batch = self.state.withLock { state -> Batch in
                // A place given up on has been taken by another task already.
                guard state.running[place] != nil else { return [] }
                let batch = self.takeBatch(&state, place: place)
                if batch.isEmpty {
                    state.running[place] = nil
                }
                return batch
            }
            guard !batch.isEmpty else { return }
            var keys: [Key] = []
            var seen = Set<Key>()
            for (_, key) in batch where seen.insert(key).inserted {
                keys.append(key)
            }
            let result: Result<[Key: Value], any Error>
            do {
                result = .success(try await self.lookup(keys))
            } catch {
                result = .failure(error)
            }
            let (answered, keepPlace) = self.state.withLock { state -> ([Waiter], Bool) in
                let answered = batch.compactMap { id, _ in state.waiting.removeValue(forKey: id) }
                return (answered, state.running[place] != nil)
            }
            for waiter in answered {
                waiter.continuation.resume(with: result.map { $0[waiter.key] })
            }
            guard keepPlace else { return }
        }
    }

    /// Fails calls whose deadline passed and gives up on batches whose callers all have; runs
    /// while anything is waiting or running.
    private func sweep() async {
        while true {
            let earliest = self.state.withLock { state -> ContinuousClock.Instant? in
                let candidates = [state.waiting.values.lazy.map(\.deadline).min(), state.running.values.min()]
                guard let earliest = candidates.compactMap({ $0 }).min() else {
                    state.sweeping = false
                    return nil
                }
                return earliest
            }
            guard let earliest else { return }
            try? await Task.sleep(until: earliest, clock: .continuous)
            let now = ContinuousClock.now
            let (expired, replacement) = self.state.withLock { state -> ([Waiter], UInt64?) in
                let due = state.waiting.compactMap { id, waiter in waiter.deadline <= now ? id : nil }
                let expired = due.compactMap { state.waiting.removeValue(forKey: $0) }
                for (place, deadline) in state.running where deadline <= now {
                    state.running[place] = nil
                }
                state.queued.removeAll { state.waiting[$0] == nil }
                // One new task is enough: it takes the whole queue, up to a batch.
                var latest: ContinuousClock.Instant?
                for id in state.queued {
                    if let deadline = state.waiting[id]?.deadline { latest = max(latest ?? deadline, deadline) }
                }
                return (expired, latest.flatMap { self.reservePlaceIfRoom(&state, until: $0) })
            }
            for waiter in expired {
                waiter.continuation.resume(throwing: OperationTimeoutError(timeout: waiter.timeout))
            }
            if let replacement {
                self.start(replacement)
            }
        }
    }
}
