import IdentityService
import KontoTestSupport
import Logging
import NIOPosix
import PostgresNIO

/// The storages every conformance test runs against.
enum IdentityStorageKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case inMemory
    case postgres

    var description: String { rawValue }

    static let logger = Logger(label: "test.identity.storage")

    /// Runs `body` with an empty storage of this kind; PostgreSQL gets a fresh, migrated database.
    func withStorage<Result: Sendable>(_ body: (any IdentityStorage) async throws -> Result) async throws -> Result {
        switch self {
        case .inMemory:
            return try await body(InMemoryIdentityStorage())
        case .postgres:
            return try await TestDatabase.withFreshDatabase { database in
                try await Self.withPostgres(database) { storage in
                    try await storage.migrate()
                    return try await body(storage)
                }
            }
        }
    }

    /// A PostgreSQL storage over `database` with its own running pool (one per simulated replica).
    static func withPostgres<Result: Sendable>(_ database: PostgresTestDatabase, _ body: (PostgresIdentityStorage) async throws -> Result) async throws -> Result {
        let client = PostgresClient(configuration: database.clientConfiguration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(PostgresIdentityStorage(client: client, logger: logger))
        }
    }
}
