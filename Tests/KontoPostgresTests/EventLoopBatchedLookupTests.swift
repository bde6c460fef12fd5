import KontoPostgres
import NIOCore
import NIOPosix
import Synchronization
import Testing

@Suite("Batched lookups on an event loop")
struct EventLoopBatchedLookupTests {
    /// A lookup over a fixed table that records every batch and can be held shut, so a test decides when a batch
    /// finishes instead of racing it. A held batch ignores cancellation, as a query on a dead connection does, but
    /// records it.
    final class RecordingLookup: Sendable {
        private struct State {
            var batches: [[String]] = []
            var cancelled = 0
            var held = false
            var pending: [(continuation: CheckedContinuation<[String: Int], any Error>, keys: [String], failure: (any Error)?)] = []
            var failNext: (any Error)?
        }

        let table: [String: Int]
        private let state = Mutex(State())

        init(table: [String: Int]) {
            self.table = table
        }

        var batches: [[String]] { self.state.withLock { $0.batches } }
        /// Batches whose task was cancelled.
        var cancelled: Int { self.state.withLock { $0.cancelled } }

        func hold() {
            self.state.withLock { $0.held = true }
        }

        func release() {
            let pending = self.state.withLock { state in
                state.held = false
                defer { state.pending = [] }
                return state.pending
            }
            for (continuation, keys, failure) in pending {
                continuation.resume(with: self.answer(keys, failure: failure))
            }
        }

        func failNext(with error: any Error) {
            self.state.withLock { $0.failNext = error }
        }

        func callAsFunction(_ keys: [String]) async throws -> [String: Int] {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[String: Int], any Error>) in
                    let (held, failure) = self.state.withLock { state in
                        state.batches.append(keys)
                        let failure = state.failNext
                        state.failNext = nil
                        if state.held { state.pending.append((continuation, keys, failure)) }
                        return (state.held, failure)
                    }
                    if !held {
                        continuation.resume(with: self.answer(keys, failure: failure))
                    }
                }
            } onCancel: {
                self.state.withLock { $0.cancelled += 1 }
            }
        }

        private func answer(_ keys: [String], failure: (any Error)?) -> Result<[String: Int], any Error> {
            if let failure {
                return .failure(failure)
            }
            return .success(self.table.filter { keys.contains($0.key) })
        }
    }

    struct LookupFailed: Error, Equatable {}

    /// Waits (yielding, bounded) until `condition` holds: the calls under test are in flight.
    private func eventually(_ condition: () async throws -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while try await !condition() {
            try #require(clock.now < deadline, "condition not reached in time")
            await Task.yield()
        }
    }

    private func withLookup(
        table: [String: Int],
        maxBatchSize: Int = 10,
        _ body: (RecordingLookup, EventLoopBatchedLookup<String, Int>) async throws -> Void
    ) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let lookup = RecordingLookup(table: table)
        let batched = EventLoopBatchedLookup<String, Int>(eventLoop: group.next(), maxBatchSize: maxBatchSize) { try await lookup($0) }
        do {
            try await body(lookup, batched)
        } catch {
            lookup.release()
            try await group.shutdownGracefully()
            throw error
        }
        lookup.release()
        try await group.shutdownGracefully()
    }

    @Test("calls made while a batch is out share the next query, duplicates asked once, missing keys answered nil")
    func coalesces() async throws {
        try await withLookup(table: ["a": 1, "b": 2, "c": 3]) { lookup, batched in
            lookup.hold()
            async let first = batched.value(for: "a", timeout: .seconds(30))
            try await eventually { lookup.batches.count == 1 }
            async let second = batched.value(for: "b", timeout: .seconds(30))
            async let third = batched.value(for: "c", timeout: .seconds(30))
            async let fourth = batched.value(for: "c", timeout: .seconds(30))
            async let missing = batched.value(for: "zz", timeout: .seconds(30))
            try await eventually { try await batched.waitingCount.get() == 5 }
            // Nothing more goes out while the first batch is out.
            #expect(lookup.batches.count == 1)
            lookup.release()
            let answers = try await [first, second, third, fourth, missing]
            #expect(answers == [1, 2, 3, 3, nil])
            let batches = lookup.batches
            #expect(batches.count == 2)
            #expect(batches.first == ["a"])
            #expect(Set(batches.last ?? []) == ["b", "c", "zz"])
            #expect(batches.last?.count == 3)
            #expect(try await batched.waitingCount.get() == 0)
        }
    }

    /// Runs jobs on an event loop, as the wire server's handlers do.
    final class LoopExecutor: TaskExecutor {
        let eventLoop: any EventLoop

        init(_ eventLoop: any EventLoop) {
            self.eventLoop = eventLoop
        }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            self.eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    @Test("calls made in one loop tick go out as one batch, at the end of that tick")
    func oneTick() async throws {
        try await withLookup(table: ["a": 1, "b": 2, "c": 3]) { lookup, batched in
            let executor = LoopExecutor(batched.eventLoop)
            // Three calls started in one tick, each running to its first await there and then (as wire handlers do).
            let calls = try await batched.eventLoop.submit {
                ["a", "b", "c"].map { key in
                    Task.immediate(executorPreference: executor) { try await batched.value(for: key, timeout: .seconds(30)) }
                }
            }.get()
            var values: [Int?] = []
            for call in calls {
                values.append(try await call.value)
            }
            #expect(values == [1, 2, 3])
            #expect(lookup.batches == [["a", "b", "c"]])
        }
    }

    @Test("a batch never holds more than maxBatchSize keys; the rest go in the next one")
    func batchSize() async throws {
        try await withLookup(table: Dictionary(uniqueKeysWithValues: (0..<7).map { ("k\($0)", $0) }), maxBatchSize: 3) { lookup, batched in
            lookup.hold()
            let values = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<7 {
                    group.addTask { try await batched.value(for: "k\(index)", timeout: .seconds(30)) }
                }
                try await eventually { try await batched.waitingCount.get() == 7 }
                // Release batch after batch: each waits for the one before it.
                while try await batched.waitingCount.get() > 0 {
                    lookup.release()
                    lookup.hold()
                    await Task.yield()
                }
                lookup.release()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(values.compactMap { $0 }.sorted() == Array(0..<7))
            #expect(lookup.batches.allSatisfy { $0.count <= 3 })
            #expect(lookup.batches.map(\.count).reduce(0, +) == 7)
        }
    }

    @Test("a failed query fails every call of its batch with the lookup's error; the next batch works")
    func failure() async throws {
        try await withLookup(table: ["a": 1, "b": 2]) { lookup, batched in
            lookup.hold()
            lookup.failNext(with: LookupFailed())
            // The first call's batch is out (held) before the second is made, so the failing batch is surely the first's.
            let first = Task { try await batched.value(for: "a", timeout: .seconds(30)) }
            try await eventually { lookup.batches.count == 1 }
            let second = Task { try await batched.value(for: "a", timeout: .seconds(30)) }
            try await eventually { try await batched.waitingCount.get() == 2 }
            lookup.release()
            await #expect(throws: LookupFailed.self) { try await first.value }
            // The second call waited for the batch after the failed one, which works.
            #expect(try await second.value == 1)
            #expect(try await batched.value(for: "b", timeout: .seconds(30)) == 2)
        }
    }

    @Test("a query that never answers fails its calls at their timeout, and the next batch goes out regardless")
    func hangingQuery() async throws {
        try await withLookup(table: ["a": 1, "b": 2]) { lookup, batched in
            lookup.hold()
            let clock = ContinuousClock()
            let start = clock.now
            let error = await #expect(throws: OperationTimeoutError.self) {
                try await batched.value(for: "a", timeout: .milliseconds(200))
            }
            #expect(error?.timeout == .milliseconds(200))
            #expect(clock.now - start < .seconds(5))
            // The stuck batch is still out (held) but told to stop; a new call gets a batch of its own.
            try await eventually { lookup.cancelled == 1 }
            let next = Task { try await batched.value(for: "b", timeout: .seconds(30)) }
            try await eventually { lookup.batches.count == 2 }
            lookup.release()
            #expect(try await next.value == 2)
            #expect(lookup.cancelled == 1)
        }
    }

    @Test("a short timeout behind a long one is still kept: each call has its own deadline")
    func mixedTimeouts() async throws {
        try await withLookup(table: ["a": 1, "b": 2]) { lookup, batched in
            lookup.hold()
            let long = Task { try await batched.value(for: "a", timeout: .seconds(30)) }
            try await eventually { lookup.batches.count == 1 }
            let clock = ContinuousClock()
            let start = clock.now
            await #expect(throws: OperationTimeoutError.self) {
                try await batched.value(for: "b", timeout: .milliseconds(100))
            }
            #expect(clock.now - start < .seconds(5))
            #expect(try await batched.waitingCount.get() == 1)
            lookup.release()
            #expect(try await long.value == 1)
        }
    }

    @Test("a cancelled caller stops waiting at once with CancellationError")
    func cancellation() async throws {
        try await withLookup(table: ["a": 1, "b": 2]) { lookup, batched in
            lookup.hold()
            let call = Task { try await batched.value(for: "a", timeout: .seconds(30)) }
            try await eventually { lookup.batches.count == 1 }
            let queued = Task { try await batched.value(for: "b", timeout: .seconds(30)) }
            try await eventually { try await batched.waitingCount.get() == 2 }
            call.cancel()
            queued.cancel()
            await #expect(throws: CancellationError.self) { try await call.value }
            await #expect(throws: CancellationError.self) { try await queued.value }
            #expect(try await batched.waitingCount.get() == 0)
            // Callers that went away say nothing about the query: it is left to finish, not cancelled.
            #expect(lookup.cancelled == 0)
        }
    }

    @Test("a caller cancelled before it asks is refused without a query")
    func cancelledBeforehand() async throws {
        try await withLookup(table: ["a": 1]) { lookup, batched async throws in
            let call = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await batched.value(for: "a", timeout: .seconds(30))
            }
            await #expect(throws: CancellationError.self) { try await call.value }
            #expect(try await batched.waitingCount.get() == 0)
            #expect(lookup.batches.isEmpty)
        }
    }
}
