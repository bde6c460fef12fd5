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

    @Test("timeouts count as unavailable; cancellation and other errors do not")
    func classification() {
        #expect(PostgresFailure.unavailability(of: OperationTimeoutError(timeout: .seconds(1)))?.reason == .timedOut)
        #expect(PostgresFailure.unavailability(of: StorageUnavailableError(.serverUnavailable))?.reason == .serverUnavailable)
        #expect(!PostgresFailure.isUnavailable(CancellationError()))
        struct Other: Error {}
        #expect(!PostgresFailure.isUnavailable(Other()))
    }
}
