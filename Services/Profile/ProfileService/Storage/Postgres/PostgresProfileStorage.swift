import Foundation
import KontoEvents
import KontoModel
import KontoPostgres
import KontoWire
import NIOCore
import NIOPosix
import Logging
import PostgresNIO

/// Keeps records in the `profile.accounts` table, one row per account with its details as `jsonb`.
///
/// The client is the caller's and must be running (`run()` in a service group) for as long as the storage is used;
/// make its configuration with ``clientConfiguration(_:)``. Every query binds its values; no SQL is built from
/// input. Connection-level failures come back as `unavailable`; the pool reconnects on its own once the database is
/// back.
///
/// Bounded reads (``fetch(accountId:keys:timeout:)``, what the store uses) are batched per event loop: concurrent loads
/// on one loop share one prepared `account_id = ANY($1)` statement on a pooled connection (``EventLoopBatchedLookup``),
/// so the database sees one small query per batch instead of one per call. A batch still out when its callers'
/// deadlines pass is abandoned and its connection closed, so the pool replaces a connection stuck on a silent server
/// instead of queueing the next batch behind it.
public struct PostgresProfileStorage: ProfileStorage {
    private let client: PostgresClient
    private let logger: Logger
    /// One batched lookup per event loop of the group.
    private let lookups: [EventLoopBatchedLookup<String, StoredRow>]

    /// - Parameters:
    ///   - client: a client made with ``clientConfiguration(_:)``.
    ///   - eventLoopGroup: the loops loads arrive on (the wire server's); each gets its own batches.
    ///   - maxFetchBatch: accounts read by one query at most.
    public init(client: PostgresClient, eventLoopGroup: any EventLoopGroup, logger: Logger, maxFetchBatch: Int = 64) {
        self.client = client
        self.logger = logger
        self.lookups = eventLoopGroup.makeIterator().map { eventLoop in
            // One batch out per loop: what arrives meanwhile makes the next batch.
            EventLoopBatchedLookup(eventLoop: eventLoop, batchExecutor: EventLoopTaskExecutor(eventLoop: eventLoop), maxBatchSize: maxFetchBatch) { accountIds in
                do {
                    return try await Self.rows(for: accountIds, client: client, logger: logger)
                } catch {
                    throw Self.mapped(error, logger: logger)
                }
            }
        }
        precondition(!self.lookups.isEmpty, "batched reads need an event loop")
    }

    /// `configuration` as the storage needs it: the batched read is prepared once per connection, and its generic
    /// plan (an index scan for any number of keys) is forced, or PostgreSQL would plan every batch again for its
    /// exact array.
    public static func clientConfiguration(_ configuration: PostgresClient.Configuration) -> PostgresClient.Configuration {
        var configuration = configuration
        configuration.options.additionalStartupParameters.append(("plan_cache_mode", "force_generic_plan"))
        // postgres-nio's pool replaces a closed connection only while it holds fewer than its minimum; a lease
        // already waiting is not counted. Without a minimum, a read waiting behind a stuck connection we close
        // (``rows(for:client:logger:)``) would wait for the next lease to open a connection, and the batch it is in
        // holds the next batch back: measured in `stalledBackend`, it waited out its whole deadline.
        configuration.options.minimumConnections = max(configuration.options.minimumConnections, 1)
        return configuration
    }

    /// The lookup of the caller's event loop when it runs on one of the group's loops, else the first.
    private var lookup: EventLoopBatchedLookup<String, StoredRow> {
        if self.lookups.count > 1, let current = MultiThreadedEventLoopGroup.currentEventLoop {
            for lookup in self.lookups where lookup.eventLoop === current {
                return lookup
            }
        }
        return self.lookups[0]
    }

    /// Read batches out now, over every loop; for tests that must order a load after a batch went out.
    package func readBatchesInFlight() async throws -> Int {
        var count = 0
        for lookup in self.lookups where try await lookup.hasBatchInFlight.get() {
            count += 1
        }
        return count
    }

    /// One batch on a pooled connection. A query does not end when its task is cancelled (its batch was abandoned:
    /// the server did not answer in time), so the connection is closed then: the pool opens a fresh one, and a
    /// connection stuck on a silent server holds up nothing. A connection the pool hands out just after it closed
    /// fails at once (``PostgresConnection/executeIfOpen(_:on:logger:)``) instead of waiting out the deadline.
    private static func rows(for accountIds: [String], client: PostgresClient, logger: Logger) async throws -> [String: StoredRow] {
        // A connection found closed before anything was sent (the pool had not yet heard of its close) is no answer
        // from the database: once it has finished closing, the next lease gets another one. Bounded, and not once
        // the batch was abandoned.
        var attempt = 1
        while true {
            do {
                return try await rowsOnce(for: accountIds, client: client, logger: logger)
            } catch let error as StorageUnavailableError where error.underlying is PostgresConnectionClosedError && attempt < 3 && !Task.isCancelled {
                await (error.underlying as? PostgresConnectionClosedError)?.waitUntilClosed()
                attempt += 1
            }
        }
    }

    private static func rowsOnce(for accountIds: [String], client: PostgresClient, logger: Logger) async throws -> [String: StoredRow] {
        try await client.withConnection { connection in
            try await withTaskCancellationHandler {
                var found = [String: StoredRow](minimumCapacity: accountIds.count)
                let statement = ProfileReadStatement(accountIds: accountIds)
                let executor = EventLoopTaskExecutor(eventLoop: connection.eventLoop)
                for try await (accountId, version, document) in try await connection.executeIfOpen(statement, on: executor, logger: logger) {
                    found[accountId] = StoredRow(version: version, document: document)
                }
                return found
            } onCancel: {
                logger.warning("profile read abandoned; closing its connection", metadata: ["konto.connection_id": "\(connection.id)"])
                let closed: EventLoopFuture<Void> = connection.close()
                closed.whenComplete { _ in }
            }
        }
    }

    /// A row as read, before its document is decoded (in the caller's task, not the batch's).
    struct StoredRow: Sendable {
        var version: Int64
        var document: String
    }

    /// Creates or updates the table; run once at start, before serving.
    public func migrate(logger: Logger? = nil) async throws {
        try await Self.migrate(client: client, logger: logger ?? self.logger)
    }

    /// Creates or updates the table through `client` alone (tools that fill a database without serving it).
    public static func migrate(client: PostgresClient, logger: Logger) async throws {
        let migrator = try PostgresMigrator(namespace: ProfileMigrations.namespace, migrations: ProfileMigrations.all, legacy: ProfileMigrations.legacy)
        try await migrator.migrate(client: client, logger: logger)
    }

    public func insert(accountId: String, values: [String: AccountValue]) async throws(ProfileStorageError) -> Int64 {
        let document = try encode(values)
        do {
            try await client.query(
                "INSERT INTO profile.accounts (account_id, version, details) VALUES (\(accountId), 1, \(document)::jsonb)",
                logger: logger
            )
            return 1
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == Self.uniqueViolation {
            throw ProfileStorageError(.conflict)
        } catch {
            throw mapped(error)
        }
    }

    /// One query of its own, unbounded; the store uses ``fetch(accountId:keys:timeout:)``.
    public func fetch(accountId: String) async throws(ProfileStorageError) -> StoredProfile? {
        let row: StoredRow?
        do {
            let rows = try await client.query(
                "SELECT version, details::text FROM profile.accounts WHERE account_id = \(accountId)",
                logger: logger
            )
            var found: StoredRow?
            for try await (version, document) in rows.decode((Int64, String).self) {
                found = StoredRow(version: version, document: document)
            }
            row = found
        } catch {
            throw mapped(error)
        }
        return try row.map { row throws(ProfileStorageError) in try decode(row, accountId: accountId) }
    }

    /// Read in a batch with the other reads in flight (``EventLoopBatchedLookup``), bounded by `timeout`; with `keys`, only their members of the document are decoded.
    public func fetch(accountId: String, keys: [String]?, timeout: Duration) async throws(ProfileStorageError) -> StoredProfile? {
        let row: StoredRow?
        do {
            row = try await lookup.value(for: accountId, timeout: timeout)
        } catch {
            throw .abandoned(error)
        }
        return try row.map { row throws(ProfileStorageError) in try decode(row, accountId: accountId, keys: keys) }
    }

    private func decode(_ row: StoredRow, accountId: String, keys: [String]? = nil) throws(ProfileStorageError) -> StoredProfile {
        do {
            return StoredProfile(values: try ProfileDocument.decode(row.document.utf8, keeping: keys), version: row.version)
        } catch {
            logger.error("stored profile details are unreadable", metadata: ["konto.account_id": "\(accountId)"])
            throw ProfileStorageError(.failure, underlying: error)
        }
    }

    public func replace(accountId: String, values: [String: AccountValue], ifVersion: Int64, events: [AccountEvent]) async throws(ProfileStorageError) -> Int64? {
        let document = try encode(values)
        do {
            let columns = try AccountEventColumns(events)
            // One statement: the events are written only if the compare-and-set updated the row.
            let rows = try await client.query(
                """
                WITH updated AS (
                    UPDATE profile.accounts SET details = \(document)::jsonb, version = version + 1, updated_at = now()
                    WHERE account_id = \(accountId) AND version = \(ifVersion)
                    RETURNING version
                ), events AS (
                    \(outboxInsert: columns, schema: "profile", after: "updated")
                )
                SELECT version FROM updated
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

    public func pendingEvents(limit: Int) async throws(ProfileStorageError) -> [AccountEvent] {
        do {
            return try await outbox.pending(limit: limit)
        } catch {
            throw mapped(error)
        }
    }

    public func drainOutbox(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int {
        try await outbox.drain(limit: limit, publish: publish)
    }

    public func watchOutbox(_ changed: @escaping @Sendable () -> Void) async throws {
        try await outbox.watch(changed)
    }

    private var outbox: PostgresOutbox { PostgresOutbox(client: client, schema: "profile", logger: logger) }

    public func delete(accountId: String) async throws(ProfileStorageError) -> Bool {
        do {
            let rows = try await client.query(
                "DELETE FROM profile.accounts WHERE account_id = \(accountId) RETURNING version",
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
            let rows = try await client.query("SELECT count(*) FROM (SELECT 1 FROM profile.accounts LIMIT 1) AS probe", logger: logger)
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
        Self.mapped(error, logger: logger)
    }

    private static func mapped(_ error: any Error, logger: Logger) -> ProfileStorageError {
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
