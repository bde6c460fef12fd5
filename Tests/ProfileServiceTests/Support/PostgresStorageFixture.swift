import KontoPostgres
import KontoTestSupport
import Logging
import NIOPosix
import PostgresNIO
import ProfileService

/// PostgreSQL storage as the service runs it: its own pool, configured as the service configures it, running.
enum PostgresStorageFixture {
    /// A storage over `database` (not migrated) with its pool running for the duration of `body`, and a separate
    /// client for looking at the database (so a test that stalls the storage's connections keeps its own).
    static func withStorage<Result: Sendable>(
        _ database: PostgresTestDatabase,
        logger: Logger = Fixtures.logger,
        maximumConnections: Int? = nil,
        _ body: (PostgresProfileStorage, PostgresClient) async throws -> Result
    ) async throws -> Result {
        try await TestDatabase.withClient(database, logger: logger) { inspector in
            var configuration = PostgresProfileStorage.clientConfiguration(database.clientConfiguration)
            if let maximumConnections {
                configuration.options.maximumConnections = maximumConnections
            }
            let client = PostgresClient(
                configuration: configuration,
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                backgroundLogger: logger
            )
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                let storage = PostgresProfileStorage(client: client, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, logger: logger)
                return try await body(storage, inspector)
            }
        }
    }
}
