import KontoErrors
import KontoRuntime
import Logging
import Synchronization
import Testing

@Suite("Start-up steps retried with backoff")
struct SetupRetryTests {
    struct Unreachable: Error {}

    @Test("a failing step is tried again until it succeeds")
    func retriesUntilSuccess() async throws {
        let attempts = Atomic(0)
        try await SetupRetry.untilSuccess("test", logger: Logger(label: "test"), backoff: Backoff(initial: .milliseconds(1), maximum: .milliseconds(4))) {
            if attempts.add(1, ordering: .relaxed).newValue < 4 {
                throw Unreachable()
            }
        }
        #expect(attempts.load(ordering: .relaxed) == 4)
    }

    @Test("shutdown (cancellation) ends the retries with CancellationError, not the step's error")
    func cancelled() async throws {
        let attempts = Atomic(0)
        let task = Task {
            try await SetupRetry.untilSuccess("test", logger: Logger(label: "test"), backoff: Backoff(initial: .milliseconds(1), maximum: .milliseconds(2))) {
                attempts.add(1, ordering: .relaxed)
                throw Unreachable()
            }
        }
        while attempts.load(ordering: .relaxed) < 2 {
            await Task.yield()
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
