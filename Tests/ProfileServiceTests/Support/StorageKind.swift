import KontoTestSupport
import Logging
import PostgresNIO
import ProfileService

/// The storages every shared suite runs against.
enum StorageKind: String, CaseIterable, CustomStringConvertible, Sendable {
    case inMemory
    case postgres

    var description: String { rawValue }

    /// Runs `body` with an empty storage of this kind; PostgreSQL gets a fresh, migrated database.
    func withStorage<Result: Sendable>(_ body: (any ProfileStorage) async throws -> Result) async throws -> Result {
        switch self {
        case .inMemory:
            return try await body(InMemoryProfileStorage())
        case .postgres:
            return try await TestDatabase.withFreshDatabase { database in
                try await PostgresStorageFixture.withStorage(database) { storage, _ in
                    try await storage.migrate()
                    return try await body(storage)
                }
            }
        }
    }

    /// Runs `body` with a store over an empty storage of this kind.
    func withStore<Result: Sendable>(
        configuration: AccountConfigurationChoice = .standard,
        options: ProfileStoreOptions = Fixtures.options,
        _ body: (ProfileStore) async throws -> Result
    ) async throws -> Result {
        try await withStorage { storage in
            try await body(ProfileStore(storage: storage, configuration: try configuration.make(), options: options, logger: Fixtures.logger))
        }
    }
}
