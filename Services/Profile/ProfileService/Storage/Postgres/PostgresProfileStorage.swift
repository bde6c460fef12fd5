import Foundation
import KontoModel
import KontoPostgres
import Logging
import PostgresNIO

/// Keeps records in the `profile_accounts` table, one row per account with its details as `jsonb`.
///
/// The client is the caller's: it must be running (`client.run()` in a service group) for as long as the storage
/// is used. Every query binds its values (`PostgresQuery` interpolation); no SQL is built from input.
/// Connection-level failures come back as `unavailable`; the pool reconnects on its own once the database is back.
public struct PostgresProfileStorage: ProfileStorage {
    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Creates or updates the table; run once at start, before serving.
    public func migrate(logger: Logger? = nil) async throws {
        let migrator = try PostgresMigrator(migrations: ProfileMigrations.all)
        try await migrator.migrate(client: client, logger: logger ?? self.logger)
    }

    public func insert(accountId: String, values: [String: AccountValue]) async throws(ProfileStorageError) -> Int64 {
        let document = try encode(values)
        do {
            try await client.query(
                "INSERT INTO profile_accounts (account_id, version, details) VALUES (\(accountId), 1, \(document)::jsonb)",
                logger: logger
            )
            return 1
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == Self.uniqueViolation {
            throw ProfileStorageError(.alreadyExists)
        } catch {
            throw mapped(error)
        }
    }

    public func fetch(accountId: String) async throws(ProfileStorageError) -> StoredProfile? {
        let row: (Int64, String)?
        do {
            let rows = try await client.query(
                "SELECT version, details::text FROM profile_accounts WHERE account_id = \(accountId)",
                logger: logger
            )
            var found: (Int64, String)?
            for try await decoded in rows.decode((Int64, String).self) {
                found = decoded
            }
            row = found
        } catch {
            throw mapped(error)
        }
        guard let (version, document) = row else {
            return nil
        }
        do {
            return StoredProfile(values: try ProfileDocument.decode(document.utf8), version: version)
        } catch {
            logger.error("stored profile details are unreadable", metadata: ["konto.account_id": "\(accountId)"])
            throw ProfileStorageError(.failure, underlying: error)
        }
    }

    public func replace(accountId: String, values: [String: AccountValue], ifVersion: Int64) async throws(ProfileStorageError) -> Int64? {
        let document = try encode(values)
        do {
            let rows = try await client.query(
                """
                UPDATE profile_accounts SET details = \(document)::jsonb, version = version + 1, updated_at = now()
                WHERE account_id = \(accountId) AND version = \(ifVersion)
                RETURNING version
                """,
                logger: logger
            )
            var newVersion: Int64?
            for try await version in rows.decode(Int64.self) {
                newVersion = version
            }
            return newVersion
        } catch {
            throw mapped(error)
        }
    }

    public func delete(accountId: String) async throws(ProfileStorageError) -> Bool {
        do {
            let rows = try await client.query(
                "DELETE FROM profile_accounts WHERE account_id = \(accountId) RETURNING version",
                logger: logger
            )
            var deleted = false
            for try await _ in rows.decode(Int64.self) {
                deleted = true
            }
            return deleted
        } catch {
            throw mapped(error)
        }
    }

    /// Reads from the table, so a database without the schema is not reported healthy.
    public func checkHealth() async throws(ProfileStorageError) {
        do {
            let rows = try await client.query("SELECT count(*) FROM (SELECT 1 FROM profile_accounts LIMIT 1) AS probe", logger: logger)
            for try await _ in rows.decode(Int64.self) {}
        } catch {
            throw mapped(error)
        }
    }

    // MARK: Helpers

    private static let uniqueViolation = "23505"

    private func encode(_ values: [String: AccountValue]) throws(ProfileStorageError) -> String {
        do {
            return String(decoding: try ProfileDocument.encode(values), as: UTF8.self)
        } catch {
            throw ProfileStorageError(.failure, underlying: error)
        }
    }

    private func mapped(_ error: any Error) -> ProfileStorageError {
        if let unavailable = PostgresFailure.unavailability(of: error) {
            return ProfileStorageError(.unavailable, underlying: unavailable)
        }
        if error is CancellationError {
            return ProfileStorageError(.unavailable, underlying: error)
        }
        logger.error("profile storage query failed", metadata: ["konto.error": "\(PostgresFailure.summary(of: error))"])
        return ProfileStorageError(.failure, underlying: error)
    }
}
