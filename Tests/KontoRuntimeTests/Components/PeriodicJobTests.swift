import KontoRuntime
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Periodic jobs")
struct PeriodicJobTests {
    /// Runs `job` in a service group until `until` returns, then shuts the group down gracefully; how long the
    /// shutdown took.
    static func run(_ job: PeriodicJob, until: () async -> Void) async throws -> Duration {
        let group = ServiceGroup(configuration: .init(services: [job], logger: Logger(label: "test")))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            await until()
            let clock = ContinuousClock()
            let start = clock.now
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return clock.now - start
        }
    }

    @Test("started immediately: the first sweep runs at once; a shutdown during the wait ends it at once")
    func immediately() async throws {
        let (sweeps, continuation) = AsyncStream<Void>.makeStream()
        let job = PeriodicJob(every: .seconds(3_600), start: .immediately) { continuation.yield() }
        let shutdown = try await Self.run(job) {
            for await _ in sweeps { break }
        }
        #expect(shutdown < .seconds(30), "the hour's wait held the shutdown")
    }

    @Test("sweep after sweep, one at a time, each waiting the interval after the last one ended")
    func oneAtATime() async throws {
        let state = Mutex((running: 0, mostAtOnce: 0, done: 0))
        let (enough, continuation) = AsyncStream<Void>.makeStream()
        // Each sweep takes longer than the interval: were they started by the clock, they would overlap.
        let job = PeriodicJob(every: .milliseconds(5)) {
            state.withLock { $0.running += 1; $0.mostAtOnce = max($0.mostAtOnce, $0.running) }
            try? await Task.sleep(for: .milliseconds(20))
            let done = state.withLock { $0.running -= 1; $0.done += 1; return $0.done }
            if done == 4 { continuation.yield() }
        }
        _ = try await Self.run(job) {
            for await _ in enough { break }
        }
        let final = state.withLock { $0 }
        #expect(final.done >= 4)
        #expect(final.mostAtOnce == 1)
        #expect(final.running == 0, "a sweep was left running after the job ended")
    }
}
