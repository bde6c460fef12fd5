import Foundation
import Logging
import PostgresNIO

/// Applies a service's migrations to its database at start, inside the service's own PostgreSQL schema.
///
/// Each service has a namespace (`profile`, `identity`, …): a schema holding its tables and its own
/// `konto_schema_migrations`, so several services can share one database without seeing each other's migrations.
/// The schema is created when missing, and every migration runs with `search_path` set to it, so its unqualified
/// names land there.
///
/// Every migration runs in its own transaction that first takes a transaction-scoped advisory lock, so replicas
/// starting at once apply each migration exactly once: the others wait, then see it recorded. The lock also guards
/// creating the schema and `konto_schema_migrations` (concurrent `CREATE … IF NOT EXISTS` can fail on a unique
/// index). One key serves every namespace: migrations are short, and services starting at once simply take turns.
/// A database that records migrations the binary does not know, or knows under another name, is refused before
/// anything is changed.
public struct PostgresMigrator: Sendable {
    /// The advisory lock key every Konto service uses (`konto` in ASCII); advisory locks are per database.
    public static let defaultLockKey: Int64 = 0x6B_6F_6E_74_6F

    /// The schema holding the service's tables and migration record.
    public let namespace: String
    public let migrations: [PostgresMigration]
    /// The service's history from before namespaces, adopted once (see ``PostgresLegacyMigrations``).
    public let legacy: PostgresLegacyMigrations?
    public let lockKey: Int64

    /// Refuses a malformed list (versions must be positive and strictly increasing, names and SQL non-empty) and a
    /// namespace that is not a plain lower-case identifier (`[a-z_][a-z0-9_]*`, up to 63 bytes, not `pg_…`).
    /// A `legacy` history must name only versions of `migrations`.
    public init(
        namespace: String,
        migrations: [PostgresMigration],
        legacy: PostgresLegacyMigrations? = nil,
        lockKey: Int64 = Self.defaultLockKey
    ) throws(PostgresMigrationError) {
        guard Self.isPlainIdentifier(namespace) else {
            throw PostgresMigrationError(
                code: .invalidMigrations,
                version: nil,
                message: "the migration namespace must match [a-z_][a-z0-9_]* (up to 63 bytes) and not start with pg_"
            )
        }
        var previous = 0
        for migration in migrations {
            guard migration.version > previous else {
                throw PostgresMigrationError(
                    code: .invalidMigrations,
                    version: migration.version,
                    message: "migration versions must be positive and strictly increasing (\(migration.version) follows \(previous))"
                )
            }
            guard !migration.name.allSatisfy(\.isWhitespace) else {
                throw PostgresMigrationError(code: .invalidMigrations, version: migration.version, message: "migration \(migration.version) has no name")
            }
            guard !migration.statements.isEmpty, !migration.statements.contains(where: { $0.allSatisfy(\.isWhitespace) }) else {
                throw PostgresMigrationError(code: .invalidMigrations, version: migration.version, message: "migration \(migration.version) has an empty statement")
            }
            previous = migration.version
        }
        if let legacy {
            let versions = Set(migrations.map(\.version))
            guard !legacy.records.isEmpty, legacy.records.allSatisfy({ versions.contains($0.version) && !$0.name.isEmpty }) else {
                throw PostgresMigrationError(
                    code: .invalidMigrations,
                    version: nil,
                    message: "a legacy history must name versions of the service's migrations"
                )
            }
        }
        self.namespace = namespace
        self.migrations = migrations
        self.legacy = legacy
        self.lockKey = lockKey
    }

    /// Identifiers cannot be bound as parameters; a namespace is spliced into SQL only after this check.
    static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 63, !name.hasPrefix("pg_") else { return false }
        let lower = UInt8(ascii: "a")...UInt8(ascii: "z")
        let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
        let underscore = UInt8(ascii: "_")
        return (lower.contains(first) || first == underscore)
            && name.utf8.allSatisfy { lower.contains($0) || digit.contains($0) || $0 == underscore }
    }

    /// `"namespace".konto_schema_migrations`.
    private var recordTable: String {
        "\"\(namespace)\".konto_schema_migrations"
    }

    /// Applies the pending migrations in order and returns those this call applied (empty when up to date).
    ///
    /// - Throws: ``PostgresMigrationError`` when the database is refused or a migration fails,
    ///   ``StorageUnavailableError`` when the database cannot be reached.
    @discardableResult
    public func migrate(client: PostgresClient, logger: Logger) async throws -> [PostgresMigration] {
        var applied: [PostgresMigration] = []
        while let migration = try await applyNext(client: client, logger: logger) {
            applied.append(migration)
        }
        return applied
    }

    /// The migrations recorded in the database, in version order; empty when it was never migrated.
    public func appliedMigrations(client: PostgresClient, logger: Logger) async throws -> [AppliedMigration] {
        do {
            let exists = try await client.query("SELECT to_regclass(\(recordTable)) IS NOT NULL", logger: logger)
            var tableExists = false
            for try await value in exists.decode(Bool.self) { tableExists = value }
            guard tableExists else { return [] }
            let rows = try await client.query(
                PostgresQuery(unsafeSQL: "SELECT version, name, applied_at FROM \(recordTable) ORDER BY version"),
                logger: logger
            )
            var result: [AppliedMigration] = []
            for try await (version, name, appliedAt) in rows.decode((Int, String, Date).self) {
                result.append(AppliedMigration(version: version, name: name, appliedAt: appliedAt))
            }
            return result
        } catch {
            throw PostgresFailure.unavailability(of: error) ?? error
        }
    }

    /// One transaction: lock, check the record, apply the first pending migration. Returns nil when none is pending.
    private func applyNext(client: PostgresClient, logger: Logger) async throws -> PostgresMigration? {
        do {
            return try await client.withTransaction(logger: logger) { connection -> PostgresMigration? in
                try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \"\(namespace)\""), logger: logger)
                // For this transaction only: the migration's unqualified names are the namespace's.
                try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL search_path TO \"\(namespace)\""), logger: logger)
                try await connection.query(
                    PostgresQuery(unsafeSQL: """
                    CREATE TABLE IF NOT EXISTS \(recordTable) (
                        version integer PRIMARY KEY,
                        name text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """),
                    logger: logger
                )
                var recorded: [(version: Int, name: String)] = []
                let rows = try await connection.query(PostgresQuery(unsafeSQL: "SELECT version, name FROM \(recordTable) ORDER BY version"), logger: logger)
                for try await (version, name) in rows.decode((Int, String).self) {
                    recorded.append((version, name))
                }
                if recorded.isEmpty, let legacy {
                    recorded = try await adopt(legacy, connection: connection, logger: logger)
                }
                guard let next = try pending(after: recorded) else {
                    return nil
                }
                var migrationLogger = logger
                migrationLogger[metadataKey: "konto.migration_version"] = "\(next.version)"
                migrationLogger[metadataKey: "konto.migration_name"] = "\(next.name)"
                do {
                    for statement in next.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: migrationLogger)
                    }
                } catch where !PostgresFailure.isUnavailable(error) {
                    migrationLogger.error("migration failed", metadata: ["konto.error": "\(PostgresFailure.summary(of: error))"])
                    throw PostgresMigrationError(
                        code: .failed,
                        version: next.version,
                        message: "migration \(next.version) \"\(next.name)\" failed and was rolled back"
                    )
                }
                var record = PostgresQuery(unsafeSQL: "INSERT INTO \(recordTable) (version, name) VALUES ($1, $2)")
                record.binds.append(next.version)
                record.binds.append(next.name)
                try await connection.query(record, logger: migrationLogger)
                migrationLogger.info("migration applied")
                return next
            }
        } catch let error as PostgresTransactionError {
            if let refusal = error.closureError as? PostgresMigrationError {
                throw refusal
            }
            throw PostgresFailure.unavailability(of: error) ?? error
        } catch {
            throw PostgresFailure.unavailability(of: error) ?? error
        }
    }

    /// Moves a history recorded before namespaces into the namespace (see ``PostgresLegacyMigrations``), inside the
    /// caller's transaction and lock. Returns what the namespace now records; empty when there was nothing to adopt.
    private func adopt(
        _ legacy: PostgresLegacyMigrations,
        connection: PostgresConnection,
        logger: Logger
    ) async throws -> [(version: Int, name: String)] {
        let exists = try await connection.query("SELECT to_regclass('public.konto_schema_migrations') IS NOT NULL", logger: logger)
        var oldRecordExists = false
        for try await value in exists.decode(Bool.self) { oldRecordExists = value }
        guard oldRecordExists else { return [] }

        let versions = legacy.records.map(\.version)
        var old: [(version: Int, name: String, appliedAt: Date)] = []
        let rows = try await connection.query(
            "SELECT version, name, applied_at FROM public.konto_schema_migrations WHERE version = ANY(\(versions)) ORDER BY version",
            logger: logger
        )
        for try await (version, name, appliedAt) in rows.decode((Int, String, Date).self) {
            old.append((version, name, appliedAt))
        }
        // Another service's history (or none of ours): not this service's to move.
        let ours = old.filter { entry in legacy.records.contains { $0.version == entry.version && $0.name == entry.name } }
        guard !ours.isEmpty else { return [] }
        guard ours.count == legacy.records.count, old.count == ours.count else {
            throw PostgresMigrationError(
                code: .nameMismatch,
                version: nil,
                message: "public.konto_schema_migrations holds part of this service's history from before namespaces; "
                    + "refusing to adopt it"
            )
        }

        var adoptLogger = logger
        adoptLogger[metadataKey: "konto.migration_namespace"] = "\(namespace)"
        do {
            for statement in legacy.statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: adoptLogger)
            }
        } catch where !PostgresFailure.isUnavailable(error) {
            adoptLogger.error("adopting migrations from before namespaces failed", metadata: ["konto.error": "\(PostgresFailure.summary(of: error))"])
            throw PostgresMigrationError(
                code: .failed,
                version: nil,
                message: "moving this service's tables from before namespaces failed and was rolled back"
            )
        }
        let names = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0.name) })
        var adopted: [(version: Int, name: String)] = []
        for entry in ours {
            let name = names[entry.version] ?? entry.name
            var record = PostgresQuery(unsafeSQL: "INSERT INTO \(recordTable) (version, name, applied_at) VALUES ($1, $2, $3)")
            record.binds.append(entry.version)
            record.binds.append(name)
            record.binds.append(entry.appliedAt)
            try await connection.query(record, logger: adoptLogger)
            adopted.append((entry.version, name))
        }
        try await connection.query("DELETE FROM public.konto_schema_migrations WHERE version = ANY(\(versions))", logger: adoptLogger)
        let remaining = try await connection.query("SELECT count(*) FROM public.konto_schema_migrations", logger: adoptLogger)
        var left: Int64 = 0
        for try await count in remaining.decode(Int64.self) { left = count }
        if left == 0 {
            try await connection.query("DROP TABLE public.konto_schema_migrations", logger: adoptLogger)
        }
        adoptLogger.notice("migrations from before namespaces adopted", metadata: ["konto.migration_count": "\(adopted.count)"])
        return adopted
    }

    /// Checks the recorded history against the binary's list and returns the first migration still to apply.
    func pending(after recorded: [(version: Int, name: String)]) throws(PostgresMigrationError) -> PostgresMigration? {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0) })
        for entry in recorded {
            guard let migration = known[entry.version] else {
                throw PostgresMigrationError(
                    code: .unknownVersion,
                    version: entry.version,
                    message: "the database records migration \(entry.version) \"\(entry.name)\", which this binary does not know "
                        + "(it knows up to \(migrations.last?.version ?? 0)); refusing to run against a newer or foreign schema"
                )
            }
            guard migration.name == entry.name else {
                throw PostgresMigrationError(
                    code: .nameMismatch,
                    version: entry.version,
                    message: "the database records migration \(entry.version) as \"\(entry.name)\", but this binary calls it \"\(migration.name)\""
                )
            }
        }
        let recordedVersions = Set(recorded.map(\.version))
        guard let next = migrations.first(where: { !recordedVersions.contains($0.version) }) else {
            return nil
        }
        if let newest = recorded.last?.version, newest > next.version {
            throw PostgresMigrationError(
                code: .outOfOrder,
                version: next.version,
                message: "migration \(next.version) \"\(next.name)\" is not recorded, but the newer migration \(newest) is"
            )
        }
        return next
    }
}
