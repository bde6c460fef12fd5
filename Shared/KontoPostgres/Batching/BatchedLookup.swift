import Synchronization

/// Coalesces concurrent single-key lookups into few batched ones (`WHERE key = ANY($1)`).
///
/// A lookup starts a batch at once while fewer than `maxConcurrentBatches` are running; otherwise
/// it queues, and the next batch to start takes everything queued (up to `maxBatchSize`). An idle
/// service therefore answers with one query per call and no added wait, and a busy one sends one
/// query for many calls: the per-query costs of the driver and the database (protocol messages,
/// parse, plan, a round trip, thread hops) are paid once per batch instead of once per call.
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
        /// Running batches and when the last of their callers gives up.
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
                let (batch, startSweeper) = self.state.withLock { state in
                    state.waiting[id] = waiter
                    state.queued.append(id)
                    return (self.startBatchIfRoom(&state), self.claimSweeper(&state))
                }
                if let batch {
                    self.start(batch)
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

    /// Takes the next batch if one may start now.
    private func startBatchIfRoom(_ state: inout State) -> (UInt64, Batch)? {
        guard state.running.count < self.maxConcurrentBatches else { return nil }
        return self.takeBatch(&state)
    }

    /// Queued calls still waiting, oldest first, at most `maxBatchSize`, registered as running.
    private func takeBatch(_ state: inout State) -> (UInt64, Batch)? {
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
        guard let deadline else { return nil }
        state.nextID += 1
        state.running[state.nextID] = deadline
        return (state.nextID, batch)
    }

    private func start(_ batch: (UInt64, Batch)) {
        Task(executorPreference: self.executor()) {
            await self.run(batch)
        }
    }

    /// Runs batches until nothing is queued, or until this one was given up on.
    private func run(_ first: (UInt64, Batch)) async {
        var (batchID, batch) = first
        while true {
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
            let (answered, next) = self.state.withLock { state -> ([Waiter], (UInt64, Batch)?) in
                let answered = batch.compactMap { id, _ in state.waiting.removeValue(forKey: id) }
                // A batch given up on has had its place taken already.
                guard state.running.removeValue(forKey: batchID) != nil else { return (answered, nil) }
                return (answered, self.takeBatch(&state))
            }
            for waiter in answered {
                waiter.continuation.resume(with: result.map { $0[waiter.key] })
            }
            guard let next else { return }
            (batchID, batch) = next
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
            let (expired, replacements) = self.state.withLock { state -> ([Waiter], [(UInt64, Batch)]) in
                let due = state.waiting.compactMap { id, waiter in waiter.deadline <= now ? id : nil }
                let expired = due.compactMap { state.waiting.removeValue(forKey: $0) }
                for (batchID, deadline) in state.running where deadline <= now {
                    state.running[batchID] = nil
                }
                var replacements: [(UInt64, Batch)] = []
                while let batch = self.startBatchIfRoom(&state) {
                    replacements.append(batch)
                }
                return (expired, replacements)
            }
            for waiter in expired {
                waiter.continuation.resume(throwing: OperationTimeoutError(timeout: waiter.timeout))
            }
            for batch in replacements {
                self.start(batch)
            }
        }
    }
}
