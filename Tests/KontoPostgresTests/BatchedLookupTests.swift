import KontoPostgres
import Synchronization
import Testing

@Suite("Batched lookups")
struct BatchedLookupTests {
    /// A lookup over a fixed table that records every batch and can be held shut, so a test
    /// decides when a batch finishes instead of racing it.
    final class RecordingLookup: Sendable {
        private struct State {
            var batches: [[String]] = []
            var held = false
            var waiting: [CheckedContinuation<Void, Never>] = []
            var failNext: (any Error)?
        }

        let table: [String: Int]
        private let state = Mutex(State())

        init(table: [String: Int]) {
            self.table = table
        }

        var batches: [[String]] { self.state.withLock { $0.batches } }

        func hold() {
            self.state.withLock { $0.held = true }
        }

        func release() {
            let waiting = self.state.withLock { state in
                state.held = false
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        func failNext(with error: any Error) {
            self.state.withLock { $0.failNext = error }
        }

        func callAsFunction(_ keys: [String]) async throws -> [String: Int] {
            let failure = self.state.withLock { state in
                state.batches.append(keys)
                defer { state.failNext = nil }
                return state.failNext
            }
            await withCheckedContinuation { continuation in
                let held = self.state.withLock { state in
                    if state.held { state.waiting.append(continuation) }
                    return state.held
                }
                if !held { continuation.resume() }
            }
            if let failure { throw failure }
            return self.table.filter { keys.contains($0.key) }
        }
    }

    struct LookupFailed: Error, Equatable {}

    /// Waits (yielding, bounded) until `condition` holds: the calls under test are in flight.
    private func eventually(_ condition: () -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while !condition() {
            try #require(clock.now < deadline, "condition not reached in time")
            await Task.yield()
        }
    }

    @Test("calls made while a batch runs share the next query, duplicates asked once, missing keys answered nil")
    func coalesces() async throws {
        let lookup = RecordingLookup(table: ["a": 1, "b": 2, "c": 3])
        let batched = BatchedLookup<String, Int>(maxConcurrentBatches: 1, maxBatchSize: 10) { try await lookup($0) }
        lookup.hold()
        async let first = batched.value(for: "a", timeout: .seconds(30))
        try await eventually { lookup.batches.count == 1 }
        async let second = batched.value(for: "b", timeout: .seconds(30))
        async let third = batched.value(for: "c", timeout: .seconds(30))
        async let fourth = batched.value(for: "c", timeout: .seconds(30))
        async let missing = batched.value(for: "zz", timeout: .seconds(30))
        try await eventually { batched.waitingCount == 5 }
        lookup.release()
        let answers = try await [first, second, third, fourth, missing]
        #expect(answers == [1, 2, 3, 3, nil])
        let batches = lookup.batches
        #expect(batches.count == 2)
        #expect(batches.first == ["a"])
        #expect(Set(batches.last ?? []) == ["b", "c", "zz"])
        #expect(batches.last?.count == 3)
        #expect(batched.waitingCount == 0)
    }

    @Test("a batch never holds more than maxBatchSize keys; the rest go in the next one")
    func batchSize() async throws {
        let lookup = RecordingLookup(table: Dictionary(uniqueKeysWithValues: (0..<7).map { ("k\($0)", $0) }))
        let batched = BatchedLookup<String, Int>(maxConcurrentBatches: 1, maxBatchSize: 3) { try await lookup($0) }
        lookup.hold()
        let values = try await withThrowingTaskGroup(of: Int?.self) { group in
            for index in 0..<7 {
                group.addTask { try await batched.value(for: "k\(index)", timeout: .seconds(30)) }
            }
            try await eventually { batched.waitingCount == 7 }
            lookup.release()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(values.compactMap { $0 }.sorted() == Array(0..<7))
        #expect(lookup.batches.allSatisfy { $0.count <= 3 })
        #expect(lookup.batches.map(\.count).reduce(0, +) == 7)
    }

    @Test("a failed query fails every call of its batch with the lookup's error; the next batch works")
    func failure() async throws {
        let lookup = RecordingLookup(table: ["a": 1, "b": 2])
        let batched = BatchedLookup<String, Int>(maxConcurrentBatches: 1, maxBatchSize: 10) { try await lookup($0) }
        lookup.hold()
        lookup.failNext(with: LookupFailed())
        let first = Task { try await batched.value(for: "a", timeout: .seconds(30)) }
        try await eventually { lookup.batches.count == 1 }
        lookup.release()
        await #expect(throws: LookupFailed.self) { try await first.value }
        #expect(try await batched.value(for: "b", timeout: .seconds(30)) == 2)
    }

    @Test("a query that never answers fails its calls at their timeout and frees its place for later batches")
    func hangingQuery() async throws {
        let lookup = RecordingLookup(table: ["a": 1, "b": 2])
        let batched = BatchedLookup<String, Int>(maxConcurrentBatches: 1, maxBatchSize: 10) { try await lookup($0) }
        lookup.hold()
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: OperationTimeoutError.self) {
            try await batched.value(for: "a", timeout: .milliseconds(200))
        }
        #expect(error?.timeout == .milliseconds(200))
        #expect(clock.now - start < .seconds(5))
        // The stuck batch still runs (held); a new call gets a batch of its own regardless.
        let next = Task { try await batched.value(for: "b", timeout: .seconds(30)) }
        try await eventually { lookup.batches.count == 2 }
        lookup.release()
        #expect(try await next.value == 2)
    }

    @Test("a cancelled caller stops waiting at once with CancellationError")
    func cancellation() async throws {
        let lookup = RecordingLookup(table: ["a": 1])
        let batched = BatchedLookup<String, Int>(maxConcurrentBatches: 1, maxBatchSize: 10) { try await lookup($0) }
        lookup.hold()
        let call = Task { try await batched.value(for: "a", timeout: .seconds(30)) }
        try await eventually { lookup.batches.count == 1 }
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(batched.waitingCount == 0)
        lookup.release()
    }
}
