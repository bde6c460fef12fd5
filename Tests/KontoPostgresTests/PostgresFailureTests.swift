import KontoPostgres
import KontoTestSupport
import Logging
import PostgresNIO
import Testing
import _ConnectionPoolModule

@Suite("Telling an unavailable database from a bad query")
struct PostgresFailureTests {
    @Test("a refused connection is a retryable unavailability")
    func refusedConnection() async throws {
        let cluster = try await TemporaryPostgresCluster.start()
        let server = cluster.maintenanceDatabase
        try await cluster.destroy()
        // Nothing listens on the port any more.
        let error = await #expect(throws: (any Error).self) {
            let connection = try await PostgresConnection.connect(configuration: server.connectionConfiguration, id: 1, logger: Logger(label: "test"))
            try await connection.close()
        }
        let unavailable = try #require(error.flatMap(PostgresFailure.unavailability(of:)))
        #expect(unavailable.reason == .connectionFailed)
        #expect(unavailable.isRetryable)
        #expect(unavailable.description == "storage.unavailable: the database is unavailable (connectionFailed)")
    }

    @Test("a bad statement is not an unavailability, and its summary shows the SQLSTATE but no value")
    func badStatement() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                let secret = "s3cret-value"
                let error = await #expect(throws: PSQLError.self) {
                    try await client.query("SELECT * FROM no_such_table WHERE x = \(secret)")
                }
                let failure = try #require(error)
                #expect(!PostgresFailure.isUnavailable(failure))
                #expect(PostgresFailure.summary(of: failure).contains("sqlstate=42P01"))
                #expect(!PostgresFailure.summary(of: failure).contains(secret))
            }
        }
    }

    @Test("the pool's own failures: a cancelled lease is not an outage, a closed pool or its circuit breaker is")
    func poolFailures() async throws {
        // Nothing listens on port 1, so a lease waits for a connection that never comes.
        var configuration = PostgresClient.Configuration(host: "127.0.0.1", port: 1, username: "u", password: nil, database: "d", tls: .disable)
        configuration.options.connectTimeout = .seconds(1)
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "test"))
        let run = Task { await client.run() }
        let waiting = Task { try await client.query("SELECT 1") }
        waiting.cancel()
        // However the driver reports it (CancellationError, or PSQLError.queryCancelled once queued), a caller that
        // went away is not an outage.
        let cancelled = await #expect(throws: (any Error).self) { try await waiting.value }
        #expect(cancelled != nil)
        #expect(cancelled.flatMap(PostgresFailure.unavailability(of:)) == nil)

        run.cancel()
        await run.value
        // After shutdown the pool's own `ConnectionPoolError` comes through as it is: recognised by its name.
        let closed = await #expect(throws: (any Error).self) { try await client.query("SELECT 1") }
        #expect(closed.map { String(reflecting: type(of: $0)) } == "_ConnectionPoolModule.ConnectionPoolError")
        #expect(closed.flatMap(PostgresFailure.unavailability(of:))?.reason == .poolUnavailable)

        // PostgresClient passes this one on as the pool module's own type, recognised by name.
        let tripped = _ConnectionPoolModule.ConnectionPoolError.connectionCreationCircuitBreakerTripped
        #expect(PostgresFailure.unavailability(of: tripped)?.reason == .poolUnavailable)
        // A lease cancelled before it was queued (the race above under load) is the caller's doing.
        #expect(PostgresFailure.unavailability(of: _ConnectionPoolModule.ConnectionPoolError.requestCancelled) == nil)
        #expect(PostgresFailure.unavailability(of: _ConnectionPoolModule.ConnectionPoolError.poolShutdown)?.reason == .poolUnavailable)
        struct OtherPoolError: Error {}
        #expect(PostgresFailure.unavailability(of: OtherPoolError()) == nil)
    }

    @Test("timeouts count as unavailable; cancellation and other errors do not")
    func classification() {
        #expect(PostgresFailure.unavailability(of: OperationTimeoutError(timeout: .seconds(1)))?.reason == .timedOut)
        #expect(PostgresFailure.unavailability(of: StorageUnavailableError(.serverUnavailable))?.reason == .serverUnavailable)
        #expect(!PostgresFailure.isUnavailable(CancellationError()))
        struct Other: Error {}
        #expect(!PostgresFailure.isUnavailable(Other()))
    }
}
