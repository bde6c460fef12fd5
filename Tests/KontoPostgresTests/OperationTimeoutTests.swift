import KontoPostgres
import Testing

@Suite("Operations with a hard time limit")
struct OperationTimeoutTests {
    @Test("a result within the limit is returned, an error is passed on")
    func resultAndError() async throws {
        let value = try await OperationTimeout.run(.seconds(5)) { 42 }
        #expect(value == 42)
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await OperationTimeout.run(.seconds(5)) { () async throws -> Int in throw Boom() }
        }
    }

    @Test("an operation that ignores cancellation is abandoned at the limit")
    func nonCooperativeOperationIsAbandoned() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: OperationTimeoutError.self) {
            try await OperationTimeout.run(.milliseconds(200)) {
                // A detached task is not cancelled with its caller: this stands for a query on a dead connection.
                await Task.detached { try? await Task.sleep(for: .seconds(5)) }.value
            }
        }
        #expect(error?.timeout == .milliseconds(200))
        #expect(clock.now - start < .seconds(4))
    }

    @Test("at the limit, a cooperative operation is cancelled")
    func operationIsCancelled() async throws {
        let (cancelled, signal) = AsyncStream<Void>.makeStream()
        await #expect(throws: OperationTimeoutError.self) {
            try await OperationTimeout.run(.milliseconds(100)) {
                do {
                    try await Task.sleep(for: .seconds(60))
                } catch {
                    signal.yield()
                    throw error
                }
            }
        }
        var iterator = cancelled.makeAsyncIterator()
        // Returns only once the operation saw its cancellation; the test's time limit bounds a failure.
        #expect(await iterator.next() != nil)
    }

    @Test("cancelling the caller ends the wait at once")
    func callerCancellation() async throws {
        let (started, signal) = AsyncStream<Void>.makeStream()
        let task = Task {
            try await OperationTimeout.run(.seconds(60)) {
                signal.yield()
                try await Task.sleep(for: .seconds(60))
            }
        }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        task.cancel()
        await #expect(throws: CancellationError.self) {
            try await task.value
        }
    }
}
