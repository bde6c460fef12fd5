import KontoPostgres
import KontoTesting
import Logging
import PostgresNIO
import Testing

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

    @Test("through the future-based API, a bad statement is not an unavailability; its summary shows the SQLSTATE only")
    func badStatementThroughFutures() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let connection = try await PostgresConnection.connect(configuration: database.connectionConfiguration, id: 1, logger: Logger(label: "test"))
            let secret = "s3cret-value"
            // That API reports server errors as `PostgresError.server`, not `PSQLError`.
            let error = await #expect(throws: PostgresError.self) {
                _ = try await connection.query("SELECT * FROM no_such_table WHERE x = '\(secret)'").get()
            }
            try await connection.close()
            let failure = try #require(error)
            #expect(!PostgresFailure.isUnavailable(failure))
            #expect(PostgresFailure.summary(of: failure) == "PostgresError.server sqlstate=42P01")
        }
    }

    @Test("through the future-based API, a statement whose connection the server ends is a retryable unavailability")
    func terminatedThroughFutures() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let connection = try await PostgresConnection.connect(configuration: database.connectionConfiguration, id: 1, logger: Logger(label: "test"))
            let pid = try await connection.query("SELECT pg_backend_pid()").get().rows[0].decode(Int32.self)
            let sleeping = connection.query("SELECT pg_sleep(60)")
            try await TestDatabase.withClient(database) { client in
                // Ended while the statement runs (not before it is sent: then that API never answers at all).
                try await Self.eventually {
                    let rows = try await client.query("SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid) AND query LIKE '%pg_sleep%' AND state = 'active'")
                    return try await rows.collect().first?.decode(Int64.self) == 1
                }
                try await client.query("SELECT pg_terminate_backend(\(pid))")
            }
            let error = await #expect(throws: (any Error).self) { _ = try await sleeping.get() }
            try? await connection.close()
            let unavailable = try #require(error.flatMap(PostgresFailure.unavailability(of:)))
            #expect(unavailable.isRetryable)
        }
    }

    private static func eventually(_ condition: () async throws -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while try await !condition() {
            try #require(clock.now < deadline, "condition not reached in time")
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("the future-based API's closed and protocol errors are unavailabilities (the driver drops that connection)")
    func legacyConnectionErrors() {
        #expect(PostgresFailure.unavailability(of: PostgresError.connectionClosed)?.reason == .connectionFailed)
        #expect(PostgresFailure.unavailability(of: PostgresError.protocol("Unexpected connection close"))?.reason == .connectionFailed)
        // The protocol message may quote what the server sent; the summary leaves it out.
        #expect(PostgresFailure.summary(of: PostgresError.protocol("Unexpected message: secret")) == "PostgresError.protocol")
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
