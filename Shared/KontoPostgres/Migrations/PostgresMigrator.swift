import Foundation
import Logging
import PostgresNIO

/// Applies a service's migrations to its database at start.
///
/// Every migration runs in its own transaction that first takes a transaction-scoped advisory lock, so replicas
/// starting at once apply each migration exactly once: the others wait, then see it recorded. The lock also guards
/// creating `konto_schema_migrations` itself. A database that records migrations the binary does not know, or knows
/// under another name, is refused before anything is changed.
public struct PostgresMigrator: Sendable {
    /// The advisory lock key every Konto service uses (`konto` in ASCII); advisory locks are per database.
    public static let defaultLockKey: Int64 = 0x6B_6F_6E_74_6F

    public let migrations: [PostgresMigration]
    public let lockKey: Int64

    /// Refuses a malformed list: versions must be positive and strictly increasing, names and SQL non-empty.
    public init(migrations: [PostgresMigration], lockKey: Int64 = Self.defaultLockKey) throws(PostgresMigrationError) {
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
        self.migrations = migrations
        self.lockKey = lockKey
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
            let exists = try await client.query("SELECT to_regclass('konto_schema_migrations') IS NOT NULL", logger: logger)
            var tableExists = false
            for try await value in exists.decode(Bool.self) { tableExists = value }
            guard tableExists else { return [] }
            let rows = try await client.query(
                "SELECT version, name, applied_at FROM konto_schema_migrations ORDER BY version",
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
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS konto_schema_migrations (
                        version integer PRIMARY KEY,
                        name text NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """,
                    logger: logger
                )
                var recorded: [(version: Int, name: String)] = []
                let rows = try await connection.query("SELECT version, name FROM konto_schema_migrations ORDER BY version", logger: logger)
                for try await (version, name) in rows.decode((Int, String).self) {
                    recorded.append((version, name))
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
                try await connection.query(
                    "INSERT INTO konto_schema_migrations (version, name) VALUES (\(next.version), \(next.name))",
                    logger: migrationLogger
                )
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
