import KontoPostgres
import KontoTestSupport
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

    static let namespace = "notes"

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
                let migrator = try PostgresMigrator(namespace: Self.namespace, migrations: Self.migrations)
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
                let first = try PostgresMigrator(namespace: Self.namespace, migrations: Array(Self.migrations.prefix(2)))
                #expect(try await first.migrate(client: client, logger: logger).count == 2)
                #expect(try await first.migrate(client: client, logger: logger).isEmpty)
                #expect(try await Self.log(client) == [1, 2])

                let later = try PostgresMigrator(namespace: Self.namespace, migrations: Self.migrations)
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
                            try await PostgresMigrator(namespace: Self.namespace, migrations: Self.migrations).migrate(client: client, logger: logger).count
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
                try await PostgresMigrator(namespace: Self.namespace, migrations: Self.migrations).migrate(client: client, logger: logger)
                let older = try PostgresMigrator(namespace: Self.namespace, migrations: Array(Self.migrations.prefix(2)))
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
                try await PostgresMigrator(namespace: Self.namespace, migrations: Array(Self.migrations.prefix(1))).migrate(client: client, logger: logger)
                var renamed = Self.migrations
                renamed[0] = PostgresMigration(version: 1, name: "create journal", statements: renamed[0].statements)
                let error = await #expect(throws: PostgresMigrationError.self) {
                    try await PostgresMigrator(namespace: Self.namespace, migrations: renamed).migrate(client: client, logger: logger)
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
                try await PostgresMigrator(namespace: Self.namespace, migrations: skipping).migrate(client: client, logger: logger)
                let error = await #expect(throws: PostgresMigrationError.self) {
                    try await PostgresMigrator(namespace: Self.namespace, migrations: Self.migrations).migrate(client: client, logger: logger)
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
                let migrator = try PostgresMigrator(namespace: Self.namespace, migrations: broken)
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

    /// Another service's history: its version 1 has another name and creates a table of the same name.
    static let otherMigrations = [
        PostgresMigration(version: 1, name: "create other log", statements: [
            "CREATE TABLE migration_log (version integer NOT NULL, note text)",
            "INSERT INTO migration_log VALUES (100, 'other')",
        ]),
    ]

    @Test("two services on one database keep their migrations, records and tables apart, each in its own schema")
    func namespacesApart() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                let notes = try PostgresMigrator(namespace: "notes", migrations: Self.migrations)
                let other = try PostgresMigrator(namespace: "other_service", migrations: Self.otherMigrations)
                #expect(try await notes.migrate(client: client, logger: logger).count == 3)
                // The other service's version 1 is neither "known under another name" nor "newer": it is not seen.
                #expect(try await other.migrate(client: client, logger: logger) == Self.otherMigrations)
                #expect(try await notes.migrate(client: client, logger: logger).isEmpty)
                #expect(try await notes.appliedMigrations(client: client, logger: logger).map(\.name) == ["create log", "create notes", "index notes"])
                #expect(try await other.appliedMigrations(client: client, logger: logger).map(\.name) == ["create other log"])
                #expect(try await Self.log(client) == [1, 2, 3])
                var otherLog: [Int] = []
                for try await version in try await client.query("SELECT version FROM other_service.migration_log").decode(Int.self) {
                    otherLog.append(version)
                }
                #expect(otherLog == [100])
                // Nothing lands in the public schema.
                let publicTables = try await client.query("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
                for try await count in publicTables.decode(Int64.self) { #expect(count == 0) }
            }
        }
    }

    @Test("replicas of two services starting at once on one database each apply their own migrations exactly once")
    func concurrentNamespaces() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let logger = logger
            let applied = try await withThrowingTaskGroup(of: (String, Int).self) { group in
                for replica in 0..<6 {
                    let (namespace, migrations) = replica.isMultiple(of: 2) ? ("notes", Self.migrations) : ("other_service", Self.otherMigrations)
                    group.addTask {
                        try await TestDatabase.withClient(database) { client in
                            let count = try await PostgresMigrator(namespace: namespace, migrations: migrations).migrate(client: client, logger: logger).count
                            return (namespace, count)
                        }
                    }
                }
                return try await group.reduce(into: [String: Int]()) { $0[$1.0, default: 0] += $1.1 }
            }
            #expect(applied == ["notes": Self.migrations.count, "other_service": Self.otherMigrations.count])
            let log = try await TestDatabase.withClient(database) { client in try await Self.log(client) }
            #expect(log == [1, 2, 3])
        }
    }

    @Test("a namespace that is not a plain lower-case identifier is refused", arguments: [
        "", "Profile", "pg_profile", "a-b", "1abc", "notes\"; DROP SCHEMA public; --", String(repeating: "a", count: 64), "prófile",
    ])
    func invalidNamespaceRefused(namespace: String) {
        let error = #expect(throws: PostgresMigrationError.self) {
            try PostgresMigrator(namespace: namespace, migrations: Self.migrations)
        }
        #expect(error?.code == .invalidMigrations)
    }

    /// A history from before namespaces: version 1 under its old name, a table in public.
    static let legacy = PostgresLegacyMigrations(
        records: [(version: 1, name: "create migration_log")],
        statements: ["ALTER TABLE public.migration_log SET SCHEMA notes"]
    )

    /// What the migrator before namespaces left: `public.konto_schema_migrations` with `records`, and the old log table.
    static func makeLegacyDatabase(_ client: PostgresClient, records: [(Int, String)]) async throws {
        try await client.query("""
            CREATE TABLE public.konto_schema_migrations (
                version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
            """)
        for (version, name) in records {
            try await client.query("INSERT INTO public.konto_schema_migrations (version, name) VALUES (\(version), \(name))")
        }
        try await client.query("CREATE TABLE public.migration_log (version integer NOT NULL, note text)")
        try await client.query("INSERT INTO public.migration_log VALUES (1, 'legacy')")
    }

    static func publicTables(_ client: PostgresClient) async throws -> [String] {
        var names: [String] = []
        for try await name in try await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename").decode(String.self) {
            names.append(name)
        }
        return names
    }

    @Test("a history from before namespaces is adopted once: tables moved, versions recorded under today's names, the old record dropped")
    func legacyAdopted() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                try await Self.makeLegacyDatabase(client, records: [(1, "create migration_log")])
                let migrator = try PostgresMigrator(namespace: Self.namespace, migrations: Self.migrations, legacy: Self.legacy)
                // Version 1 is adopted, not applied again; 2 and 3 are applied.
                #expect(try await migrator.migrate(client: client, logger: logger).map(\.version) == [2, 3])
                #expect(try await migrator.migrate(client: client, logger: logger).isEmpty)
                #expect(try await migrator.appliedMigrations(client: client, logger: logger).map(\.name) == ["create log", "create notes", "index notes"])
                #expect(try await Self.log(client) == [1, 2, 3])
                #expect(try await Self.publicTables(client).isEmpty)
            }
        }
    }

    @Test("another service's entries in the old shared record are kept, and the record with them")
    func legacySharedRecordKept() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                try await Self.makeLegacyDatabase(client, records: [(1, "create migration_log"), (2, "someone else's")])
                let migrator = try PostgresMigrator(namespace: Self.namespace, migrations: Self.migrations, legacy: Self.legacy)
                #expect(try await migrator.migrate(client: client, logger: logger).map(\.version) == [2, 3])
                #expect(try await Self.log(client) == [1, 2, 3])
                #expect(try await Self.publicTables(client) == ["konto_schema_migrations"])
                var names: [String] = []
                for try await name in try await client.query("SELECT name FROM public.konto_schema_migrations").decode(String.self) {
                    names.append(name)
                }
                #expect(names == ["someone else's"])
            }
        }
    }

    @Test("part of this service's old history is refused before anything changes")
    func legacyPartialRefused() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                try await Self.makeLegacyDatabase(client, records: [(1, "create migration_log")])
                let twoSteps = PostgresLegacyMigrations(
                    records: [(version: 1, name: "create migration_log"), (version: 2, name: "create old notes")],
                    statements: Self.legacy.statements
                )
                let migrator = try PostgresMigrator(namespace: Self.namespace, migrations: Self.migrations, legacy: twoSteps)
                let error = await #expect(throws: PostgresMigrationError.self) {
                    try await migrator.migrate(client: client, logger: logger)
                }
                #expect(error?.code == .nameMismatch)
                #expect(try await Self.publicTables(client) == ["konto_schema_migrations", "migration_log"])
                #expect(try await migrator.appliedMigrations(client: client, logger: logger).isEmpty)
            }
        }
    }

    @Test("an old record that holds none of this service's history is left alone, and the service starts fresh")
    func legacyForeignIgnored() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                try await Self.makeLegacyDatabase(client, records: [(1, "create other things")])
                try await client.query("DROP TABLE public.migration_log")
                let migrator = try PostgresMigrator(namespace: Self.namespace, migrations: Self.migrations, legacy: Self.legacy)
                #expect(try await migrator.migrate(client: client, logger: logger).map(\.version) == [1, 2, 3])
                #expect(try await Self.publicTables(client) == ["konto_schema_migrations"])
                var names: [String] = []
                for try await name in try await client.query("SELECT name FROM public.konto_schema_migrations").decode(String.self) {
                    names.append(name)
                }
                #expect(names == ["create other things"])
            }
        }
    }

    @Test("a legacy history naming a version the service does not have is refused when the migrator is made")
    func invalidLegacyRefused() {
        for records in [[], [(version: 9, name: "create migration_log")], [(version: 1, name: "")]] {
            let error = #expect(throws: PostgresMigrationError.self) {
                try PostgresMigrator(
                    namespace: Self.namespace,
                    migrations: Self.migrations,
                    legacy: PostgresLegacyMigrations(records: records, statements: [])
                )
            }
            #expect(error?.code == .invalidMigrations)
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
                try PostgresMigrator(namespace: Self.namespace, migrations: list)
            }
            #expect(error?.code == .invalidMigrations)
        }
    }

    static func log(_ client: PostgresClient) async throws -> [Int] {
        var versions: [Int] = []
        for try await version in try await client.query("SELECT version FROM notes.migration_log ORDER BY version").decode(Int.self) {
            versions.append(version)
        }
        return versions
    }
}
