import KontoPostgres
import KontoTesting
import Logging
import NIOPosix
import PostgresNIO
import ProfileService

/// PostgreSQL storage as the service runs it: the pool and the pinned read connections both running.
enum PostgresStorageFixture {
    /// A storage over `database` (not migrated), its pool and read connections running for the duration of `body`.
    static func withStorage<Result: Sendable>(
        _ database: PostgresTestDatabase,
        logger: Logger = Fixtures.logger,
        _ body: (PostgresProfileStorage, PostgresClient) async throws -> Result
    ) async throws -> Result {
        try await TestDatabase.withClient(database, logger: logger) { client in
            let reads = PinnedConnections(
                configuration: PostgresProfileStorage.readConfiguration(database.connectionConfiguration),
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                logger: logger
            )
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await reads.run() }
                defer { group.cancelAll() }
                return try await body(PostgresProfileStorage(client: client, reads: reads, logger: logger), client)
            }
        }
    }
}
