import KontoPostgres
import KontoTesting
import Logging
import PostgresNIO
import Testing

@Suite("Versioned migrations")
struct PostgresMigratorTests {
    let logger: Logger = {
        var logger = Logger(label: "test.migrations")
        logger.logLevel = .critical
        return logger
    }()

    /// Each migration logs its own application, so "exactly once" can be counted in the database.
    static let migrations = [
        PostgresMigration(version: 1, name: "create log", statements: [
            "CREATE TABLE migration_log (version integer NOT NULL)",
            "INSERT INTO migration_log VALUES (1)",
        ]),
        PostgresMigration(version: 2, name: "create notes", statements: [
            "CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL)",
            "INSERT INTO migration_log VALUES (2)",
        ]),
        PostgresMigration(version: 3, name: "index notes", statements: [
            "CREATE INDEX notes_body ON notes (body)",
            "INSERT INTO migration_log VALUES (3)",
        ]),
    ]

    @Test("a fresh database gets every migration once, recorded with its name")
    func appliesOnce() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                let migrator = try PostgresMigrator(migrations: Self.migrations)
                #expect(try await migrator.appliedMigrations(client: client, logger: logger).isEmpty)

                let applied = try await migrator.migrate(client: client, logger: logger)
                #expect(applied == Self.migrations)
                let recorded = try await migrator.appliedMigrations(client: client, logger: logger)
                #expect(recorded.map(\.version) == [1, 2, 3])
                #expect(recorded.map(\.name) == ["create log", "create notes", "index notes"])
                #expect(try await Self.log(client) == [1, 2, 3])
            }
        }
    }

    @Test("a second start applies nothing and changes nothing; a later release applies only its new migration")
    func idempotent() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                let first = try PostgresMigrator(migrations: Array(Self.migrations.prefix(2)))
                #expect(try await first.migrate(client: client, logger: logger).count == 2)
                #expect(try await first.migrate(client: client, logger: logger).isEmpty)
                #expect(try await Self.log(client) == [1, 2])

                let later = try PostgresMigrator(migrations: Self.migrations)
                #expect(try await later.migrate(client: client, logger: logger).map(\.version) == [3])
                #expect(try await later.migrate(client: client, logger: logger).isEmpty)
                #expect(try await Self.log(client) == [1, 2, 3])
            }
        }
    }

    @Test("replicas starting at once apply each migration exactly once")
    func concurrentRunners() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let logger = logger
            // Each replica has its own pool, as separate processes would.
            let appliedCounts = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await TestDatabase.withClient(database) { client in
                            try await PostgresMigrator(migrations: Self.migrations).migrate(client: client, logger: logger).count
                        }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(appliedCounts.reduce(0, +) == Self.migrations.count)
            let log = try await TestDatabase.withClient(database) { client in
                try await Self.log(client)
            }
            #expect(log == [1, 2, 3])
        }
    }

    @Test("a database with a newer, unknown migration is refused before anything changes")
    func newerVersionRefused() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                try await PostgresMigrator(migrations: Self.migrations).migrate(client: client, logger: logger)
                let older = try PostgresMigrator(migrations: Array(Self.migrations.prefix(2)))
                let error = await #expect(throws: PostgresMigrationError.self) {
                    try await older.migrate(client: client, logger: logger)
                }
                #expect(error?.code == .unknownVersion)
                #expect(error?.version == 3)
                #expect(error?.description.contains("index notes") == true)
                #expect(error?.isRetryable == false)
                #expect(try await Self.log(client) == [1, 2, 3])
            }
        }
    }

    @Test("a known version recorded under another name is refused")
    func nameMismatchRefused() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                try await PostgresMigrator(migrations: Array(Self.migrations.prefix(1))).migrate(client: client, logger: logger)
                var renamed = Self.migrations
                renamed[0] = PostgresMigration(version: 1, name: "create journal", statements: renamed[0].statements)
                let error = await #expect(throws: PostgresMigrationError.self) {
                    try await PostgresMigrator(migrations: renamed).migrate(client: client, logger: logger)
                }
                #expect(error?.code == .nameMismatch)
                #expect(error?.version == 1)
                #expect(try await Self.log(client) == [1])
            }
        }
    }

    @Test("a missing migration below the newest recorded one is refused, not applied out of order")
    func outOfOrderRefused() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                let skipping = [Self.migrations[0], PostgresMigration(version: 3, name: "index notes", sql: "SELECT 1")]
                try await PostgresMigrator(migrations: skipping).migrate(client: client, logger: logger)
                let error = await #expect(throws: PostgresMigrationError.self) {
                    try await PostgresMigrator(migrations: Self.migrations).migrate(client: client, logger: logger)
                }
                #expect(error?.code == .outOfOrder)
                #expect(error?.version == 2)
            }
        }
    }

    @Test("a failing migration is rolled back entirely and not recorded; earlier ones stay")
    func failingMigrationRollsBack() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                let broken = [
                    Self.migrations[0],
                    PostgresMigration(version: 2, name: "half done", statements: [
                        "INSERT INTO migration_log VALUES (2)",
                        "ALTER TABLE no_such_table ADD COLUMN x integer",
                    ]),
                ]
                let migrator = try PostgresMigrator(migrations: broken)
                let error = await #expect(throws: PostgresMigrationError.self) {
                    try await migrator.migrate(client: client, logger: logger)
                }
                #expect(error?.code == .failed)
                #expect(error?.version == 2)
                #expect(try await migrator.appliedMigrations(client: client, logger: logger).map(\.version) == [1])
                #expect(try await Self.log(client) == [1])
            }
        }
    }

    @Test("a malformed list is refused when the migrator is made")
    func invalidListsRefused() {
        let lists: [[PostgresMigration]] = [
            [PostgresMigration(version: 0, name: "zero", sql: "SELECT 1")],
            [PostgresMigration(version: 2, name: "b", sql: "SELECT 1"), PostgresMigration(version: 1, name: "a", sql: "SELECT 1")],
            [PostgresMigration(version: 1, name: "a", sql: "SELECT 1"), PostgresMigration(version: 1, name: "again", sql: "SELECT 1")],
            [PostgresMigration(version: 1, name: " ", sql: "SELECT 1")],
            [PostgresMigration(version: 1, name: "empty", statements: [])],
            [PostgresMigration(version: 1, name: "blank", sql: "  ")],
        ]
        for list in lists {
            let error = #expect(throws: PostgresMigrationError.self) {
                try PostgresMigrator(migrations: list)
            }
            #expect(error?.code == .invalidMigrations)
        }
    }

    static func log(_ client: PostgresClient) async throws -> [Int] {
        var versions: [Int] = []
        for try await version in try await client.query("SELECT version FROM migration_log ORDER BY version").decode(Int.self) {
            versions.append(version)
        }
        return versions
    }
}
