import KontoContracts
import KontoModel
import KontoTestSupport
import Logging
import PostgresNIO
import ProfileService
import Testing

/// PostgreSQL goes away and comes back while one store keeps serving.
@Suite("Profile store: database outage")
struct ProfileStoreOutageTests {
    static let operationTimeout = Duration.seconds(2)
    /// What "fails fast" means on a loaded two-core machine: the timeout plus scheduling slack, far below the pool's
    /// own waits (its circuit breaker trips after 60 s). The slack is 4 s: a clean-clone run beside release builds
    /// and benchmarks saw 4.4 s with 2.
    static let failFastBound = operationTimeout + .seconds(4)

    @Test("calls fail fast with a retryable error while PostgreSQL is down, and succeed again once it is back")
    func outageAndRecovery() async throws {
        let cluster = try await TemporaryPostgresCluster.start()
        do {
            try await Self.exercise(cluster)
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    private static func exercise(_ cluster: TemporaryPostgresCluster) async throws {
        let logger = Fixtures.logger
        let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
        try await PostgresStorageFixture.withStorage(database, logger: logger) { storage, _ in
            try await storage.migrate()
            let store = ProfileStore(
                storage: storage,
                configuration: try AccountConfigurationChoice.standard.make(),
                options: ProfileStoreOptions(operationTimeout: operationTimeout),
                logger: logger
            )
            let created = try await store.create(accountId: "a1", details: Fixtures.details())
            #expect(await store.isReady())

            try await cluster.stop()

            let clock = ContinuousClock()
            let calls: [(String, @Sendable () async throws -> Void)] = [
                ("load", { _ = try await store.load(accountId: "a1") }),
                ("modify", { _ = try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["plan": .string("pro")])) }),
                ("create", { _ = try await store.create(accountId: "a2", details: Fixtures.details()) }),
                ("delete", { _ = try await store.delete(accountId: "a1") }),
                ("checkHealth", { try await store.checkHealth() }),
                // Again, now that the pool has seen its connections fail and is backing off.
                ("load again", { _ = try await store.load(accountId: "a1") }),
            ]
            var slowest = Duration.zero
            for (name, call) in calls {
                let start = clock.now
                let error = await #expect(throws: ServiceError.self, "\(name)") { try await call() }
                let elapsed = clock.now - start
                slowest = max(slowest, elapsed)
                #expect(error?.code == .profileStorageUnavailable, "\(name)")
                #expect(error?.isRetryable == true, "\(name)")
                #expect(elapsed < failFastBound, "\(name) took \(elapsed)")
            }
            #expect(await store.isReady() == false)
            print("outage: slowest failing call took \(slowest) (timeout \(operationTimeout))")

            try await cluster.start()

            // The pool reconnects on its own schedule (backoff from 100 ms); wait for real success, bounded.
            let recovered = try await awaitRecovery(store, accountId: "a1", within: .seconds(90))
            #expect(recovered == created, "the store served again with the data from before the outage")
            let modified = try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["plan": .string("pro")]), expectedVersion: 1)
            #expect(modified.version == 2)
            #expect(await store.isReady())
        }
    }

    /// Loads until it succeeds (nil when the bound passes first); only the outage's own error is retried.
    private static func awaitRecovery(_ store: ProfileStore, accountId: String, within bound: Duration) async throws -> VersionedAccountDetails? {
        let clock = ContinuousClock()
        let deadline = clock.now + bound
        while clock.now < deadline {
            do {
                return try await store.load(accountId: accountId)
            } catch where error.code == .profileStorageUnavailable {
                // A poll interval, so failures that come back at once do not spin the CPU.
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        return nil
    }
}
