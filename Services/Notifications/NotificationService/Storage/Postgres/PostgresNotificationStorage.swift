import Foundation
import KontoEvents
import KontoModel
import KontoPostgres
import Logging
import NIOCore
import PostgresNIO

/// Keeps Notifications' records in the `notifications` schema: events (stored once per id), consumer groups, the
/// deliveries each group still has to process, and dead letters.
///
/// Claims use `FOR UPDATE SKIP LOCKED`, so consumers of one group on any number of replicas claim disjoint
/// deliveries without waiting on each other. The client is the caller's and must be running for as long as the
/// storage is used. Every query binds its values; each method is one statement, atomic on its own.
public struct PostgresNotificationStorage: NotificationStorage {
    private let client: PostgresClient
    private let logger: Logger
    private let operationTimeout: Duration

    /// Every statement is bounded by `operationTimeout` (past it: `unavailable`, and the caller tries again): a
    /// statement waiting on the pool across a PostgreSQL restart was seen never to return, stopping the webhook and
    /// subscription loops for good (found by the end-to-end fault tests).
    public init(client: PostgresClient, logger: Logger, operationTimeout: Duration = .seconds(5)) {
        self.client = client
        self.logger = logger
        self.operationTimeout = operationTimeout
    }

    /// Creates or updates the schema; run once at start, before serving. Safe with several replicas starting at once.
    public func migrate(logger: Logger? = nil) async throws {
        let migrator = try PostgresMigrator(namespace: NotificationMigrations.namespace, migrations: NotificationMigrations.all)
        try await migrator.migrate(client: client, logger: logger ?? self.logger)
    }

    public func append(_ events: [AccountEvent], at now: Timestamp) async throws(NotificationStorageError) -> AppendOutcome {
        guard !events.isEmpty else { return AppendOutcome(stored: 0, duplicates: 0) }
        let stored = try await run { client, logger in
            let columns = try AccountEventColumns(events)
            // Stored in the batch's order; an id stored before (or twice in the batch) is skipped. Each new event is
            // queued for every group whose types match, in the same statement.
            let rows = try await client.query(
                """
                WITH input AS (
                    SELECT * FROM unnest(\(columns.ids)::uuid[], \(columns.accountIds)::text[], \(columns.types)::text[],
                                         \(columns.documents)::text[], \(columns.times)::timestamptz[])
                        WITH ORDINALITY AS e(event_id, account_id, type, event, occurred_at, ordinal)
                ), inserted AS (
                    INSERT INTO notifications.events (event_id, account_id, type, event, occurred_at, stored_at)
                    SELECT event_id, account_id, type, event::jsonb, occurred_at, \(now.date) FROM input ORDER BY ordinal
                    ON CONFLICT (event_id) DO NOTHING
                    RETURNING position, account_id, type
                ), queued AS (
                    INSERT INTO notifications.deliveries (group_name, position, account_id, visible_at)
                    SELECT g.name, i.position, i.account_id, \(now.date)
                    FROM inserted AS i JOIN notifications.groups AS g ON g.types IS NULL OR i.type = ANY (g.types)
                ), requested AS (
                    INSERT INTO notifications.erasures (account_id, requested_at)
                    SELECT DISTINCT account_id, \(now.date) FROM inserted WHERE type = 'deletingAccount'
                    ON CONFLICT (account_id) DO NOTHING
                ), rearmed AS (
                    -- Any other event of an account to be erased: its erasure has more to do (see eraseDeletedAccounts).
                    UPDATE notifications.erasures SET generation = generation + 1
                    WHERE account_id IN (SELECT account_id FROM inserted WHERE type <> 'deletingAccount')
                )
                SELECT count(*) FROM inserted
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).first() ?? 0
        }
        return AppendOutcome(stored: stored, duplicates: events.count - stored)
    }

    public func ensureGroup(_ name: String, types: [String]?, owner: String?, at now: Timestamp) async throws(NotificationStorageError) -> GroupOutcome {
        let sorted = types.map { Array(Set($0)).sorted() }
        return try await run { client, logger in
            // One statement: create it, or else claim it when it has no owner and the types match. The conflict
            // branch always updates (to the same owner unless claiming), so RETURNING shows the row as it is after
            // any concurrent declaration committed: a caller racing another for a new name sees the winner's owner.
            let rows = try await client.query(
                """
                INSERT INTO notifications.groups AS g (name, types, created_at, owner) VALUES (\(name), \(sorted), \(now.date), \(owner))
                ON CONFLICT (name) DO UPDATE SET owner = CASE
                    WHEN g.owner IS NULL AND g.types IS NOT DISTINCT FROM excluded.types THEN excluded.owner ELSE g.owner END
                RETURNING (xmax = 0), g.types, g.owner
                """,
                logger: logger
            )
            for try await (inserted, existing, stored) in rows.decode((Bool, [String]?, String?).self) {
                if inserted { return .created }
                if let stored, stored != owner { return .foreign }
                return existing == sorted ? .existing : .mismatch
            }
            return .mismatch
        }
    }

    public func groupOwner(_ name: String) async throws(NotificationStorageError) -> String?? {
        try await run { client, logger in
            let rows = try await client.query("SELECT owner FROM notifications.groups WHERE name = \(name)", logger: logger)
            for try await owner in rows.decode(String?.self) { return .some(owner) }
            return nil
        }
    }

    public func groupExists(_ name: String) async throws(NotificationStorageError) -> Bool {
        try await run { client, logger in
            let rows = try await client.query("SELECT 1 FROM notifications.groups WHERE name = \(name)", logger: logger)
            return try await rows.decode(Int.self).first() != nil
        }
    }

    public func claim(group: String, limit: Int, at now: Timestamp, visibility: Duration, maxAttempts: Int) async throws(NotificationStorageError) -> [ClaimedDelivery] {
        let visibleUntil = now.adding(visibility)
        return try await run { client, logger in
            // One statement: deliveries claimed too often already go to dead letter; the oldest due others whose
            // account has no earlier delivery queued in the group are claimed, skipping rows another consumer
            // is claiming right now. All CTEs see one snapshot, so an exhausted row still holds back its account's
            // later deliveries until the next claim.
            let rows = try await client.query(
                """
                WITH exhausted AS (
                    DELETE FROM notifications.deliveries
                    WHERE group_name = \(group) AND visible_at <= \(now.date) AND attempts >= \(maxAttempts)
                    RETURNING group_name, position, attempts, last_error
                ), buried AS (
                    INSERT INTO notifications.dead_letters (group_name, position, attempts, last_error, dead_at)
                    SELECT group_name, position, attempts, coalesce(last_error, 'not acknowledged after ' || attempts || ' attempts'), \(now.date)
                    FROM exhausted
                    ON CONFLICT (group_name, position) DO NOTHING
                ), due AS (
                    SELECT d.group_name, d.position FROM notifications.deliveries AS d
                    WHERE d.group_name = \(group) AND d.visible_at <= \(now.date) AND d.attempts < \(maxAttempts)
                      AND NOT EXISTS (
                          SELECT 1 FROM notifications.deliveries AS earlier
                          WHERE earlier.group_name = d.group_name AND earlier.account_id = d.account_id AND earlier.position < d.position
                      )
                    ORDER BY d.position
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), claimed AS (
                    UPDATE notifications.deliveries AS d
                    SET visible_at = \(visibleUntil.date), attempts = d.attempts + 1, claim_id = gen_random_uuid()
                    FROM due WHERE d.group_name = due.group_name AND d.position = due.position
                    RETURNING d.position, d.claim_id, d.attempts
                )
                SELECT c.position, c.claim_id, c.attempts, e.event::text
                FROM claimed AS c JOIN notifications.events AS e ON e.position = c.position
                ORDER BY c.position
                """,
                logger: logger
            )
            var claimed: [ClaimedDelivery] = []
            for try await (position, claimID, attempts, document) in rows.decode((Int64, UUID, Int32, String).self) {
                let event = try Self.decoder.decode(AccountEvent.self, from: Data(document.utf8))
                claimed.append(ClaimedDelivery(claim: DeliveryClaim(group: group, position: position, claimID: claimID), event: event, attempts: Int(attempts)))
            }
            return claimed
        }
    }

    public func acknowledge(_ claims: [DeliveryClaim]) async throws(NotificationStorageError) -> Int {
        guard !claims.isEmpty else { return 0 }
        return try await run { client, logger in
            // One statement for a consumer's batch of acks.
            let rows = try await client.query(
                """
                WITH acked AS (
                    DELETE FROM notifications.deliveries AS d
                    USING unnest(\(claims.map(\.group))::text[], \(claims.map(\.position))::bigint[], \(claims.map(\.claimID))::uuid[])
                        AS c(group_name, position, claim_id)
                    WHERE d.group_name = c.group_name AND d.position = c.position AND d.claim_id = c.claim_id
                    RETURNING 1
                )
                SELECT count(*) FROM acked
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).first() ?? 0
        }
    }

    public func retry(_ claim: DeliveryClaim, reason: String, retryAt: Timestamp, maxAttempts: Int, at now: Timestamp) async throws(NotificationStorageError) -> RetryOutcome {
        try await run { client, logger in
            let rows = try await client.query(
                """
                WITH target AS (
                    SELECT group_name, position, attempts FROM notifications.deliveries
                    WHERE group_name = \(claim.group) AND position = \(claim.position) AND claim_id = \(claim.claimID)
                    FOR UPDATE
                ), rescheduled AS (
                    UPDATE notifications.deliveries AS d
                    SET visible_at = \(retryAt.date), last_error = \(reason), claim_id = NULL
                    FROM target AS t
                    WHERE d.group_name = t.group_name AND d.position = t.position AND t.attempts < \(maxAttempts)
                    RETURNING 1
                ), removed AS (
                    DELETE FROM notifications.deliveries AS d USING target AS t
                    WHERE d.group_name = t.group_name AND d.position = t.position AND t.attempts >= \(maxAttempts)
                    RETURNING d.group_name, d.position, d.attempts
                ), buried AS (
                    INSERT INTO notifications.dead_letters (group_name, position, attempts, last_error, dead_at)
                    SELECT group_name, position, attempts, \(reason), \(now.date) FROM removed
                    ON CONFLICT (group_name, position) DO NOTHING
                    RETURNING 1
                )
                SELECT (SELECT count(*) FROM rescheduled), (SELECT count(*) FROM removed)
                """,
                logger: logger
            )
            for try await (rescheduled, removed) in rows.decode((Int, Int).self) {
                if rescheduled > 0 { return .scheduled }
                if removed > 0 { return .deadLettered }
            }
            return .stale
        }
    }

    public func reject(_ claim: DeliveryClaim, reason: String, at now: Timestamp) async throws(NotificationStorageError) -> Bool {
        try await run { client, logger in
            let rows = try await client.query(
                """
                WITH removed AS (
                    DELETE FROM notifications.deliveries
                    WHERE group_name = \(claim.group) AND position = \(claim.position) AND claim_id = \(claim.claimID)
                    RETURNING group_name, position, attempts
                ), buried AS (
                    INSERT INTO notifications.dead_letters (group_name, position, attempts, last_error, dead_at)
                    SELECT group_name, position, attempts, \(reason), \(now.date) FROM removed
                    ON CONFLICT (group_name, position) DO NOTHING
                )
                SELECT count(*) FROM removed
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).first() == 1
        }
    }

    public func release(_ claim: DeliveryClaim, at now: Timestamp) async throws(NotificationStorageError) {
        try await run { client, logger in
            try await client.query(
                """
                UPDATE notifications.deliveries SET visible_at = \(now.date), claim_id = NULL
                WHERE group_name = \(claim.group) AND position = \(claim.position) AND claim_id = \(claim.claimID)
                """,
                logger: logger
            )
        }
    }

    public func nextDue(group: String) async throws(NotificationStorageError) -> Timestamp? {
        try await run { client, logger in
            let rows = try await client.query("SELECT min(visible_at) FROM notifications.deliveries WHERE group_name = \(group)", logger: logger)
            return try await rows.decode(Date?.self).first().flatMap { $0 }.map(Timestamp.init)
        }
    }

    public func deadLetters(group: String, limit: Int) async throws(NotificationStorageError) -> [DeadLetter] {
        try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT e.event::text, l.attempts, l.last_error, l.dead_at
                FROM notifications.dead_letters AS l JOIN notifications.events AS e ON e.position = l.position
                WHERE l.group_name = \(group)
                ORDER BY l.position
                LIMIT \(limit)
                """,
                logger: logger
            )
            var letters: [DeadLetter] = []
            for try await (document, attempts, lastError, deadAt) in rows.decode((String, Int32, String?, Date).self) {
                let event = try Self.decoder.decode(AccountEvent.self, from: Data(document.utf8))
                letters.append(DeadLetter(event: event, attempts: Int(attempts), lastError: lastError, deadAt: Timestamp(deadAt)))
            }
            return letters
        }
    }

    public func replayDeadLetters(group: String, eventIds: [UUID]?, at now: Timestamp) async throws(NotificationStorageError) -> Int {
        try await run { client, logger in
            let rows = try await client.query(
                """
                WITH revived AS (
                    DELETE FROM notifications.dead_letters AS l
                    WHERE l.group_name = \(group)
                      AND (\(eventIds)::uuid[] IS NULL
                           OR l.position IN (SELECT position FROM notifications.events WHERE event_id = ANY (\(eventIds)::uuid[])))
                    RETURNING l.group_name, l.position
                ), queued AS (
                    INSERT INTO notifications.deliveries (group_name, position, account_id, visible_at)
                    SELECT r.group_name, r.position, e.account_id, \(now.date)
                    FROM revived AS r JOIN notifications.events AS e ON e.position = r.position
                    ON CONFLICT (group_name, position) DO NOTHING
                )
                SELECT count(*) FROM revived
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).first() ?? 0
        }
    }

    public func replay(group: String, from: Timestamp, at now: Timestamp) async throws(NotificationStorageError) -> Int {
        try await run { client, logger in
            let rows = try await client.query(
                """
                WITH queued AS (
                    INSERT INTO notifications.deliveries (group_name, position, account_id, visible_at)
                    SELECT g.name, e.position, e.account_id, \(now.date)
                    FROM notifications.groups AS g JOIN notifications.events AS e
                      ON e.occurred_at >= \(from.date) AND (g.types IS NULL OR e.type = ANY (g.types))
                    WHERE g.name = \(group)
                    ORDER BY e.position
                    ON CONFLICT (group_name, position) DO NOTHING
                    RETURNING 1
                )
                SELECT count(*) FROM queued
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).first() ?? 0
        }
    }

    public func accountEvents(accountId: String, after cursor: TailCursor?, limit: Int) async throws(NotificationStorageError) -> [TailedEvent] {
        let cursor = cursor ?? TailCursor(transaction: 0, position: 0)
        return try await run { client, logger in
            // As a tail reads (see TailCursor), for one account. Events stored before migration 4 have no
            // transaction: they count as transaction 0, settled and first.
            let rows = try await client.query(
                """
                SELECT coalesce(e.txid, '0'::xid8)::text AS txid_text, e.position, e.event::text FROM notifications.events AS e
                WHERE e.account_id = \(accountId)
                  AND (coalesce(e.txid, '0'::xid8), e.position) > (\(String(cursor.transaction))::xid8, \(cursor.position))
                  AND coalesce(e.txid, '0'::xid8) < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY coalesce(e.txid, '0'::xid8), e.position
                LIMIT \(limit)
                """,
                logger: logger
            )
            return try await Self.tailed(rows, snapshot: nil)
        }
    }

    public func cursor(ofEvent id: UUID, accountId: String) async throws(NotificationStorageError) -> TailCursor? {
        try await run { client, logger in
            let rows = try await client.query(
                "SELECT coalesce(txid, '0'::xid8)::text, position FROM notifications.events WHERE event_id = \(id) AND account_id = \(accountId)",
                logger: logger
            )
            guard let (transaction, position) = try await rows.decode((String, Int64).self).first(), let value = UInt64(transaction) else { return nil }
            return TailCursor(transaction: value, position: position)
        }
    }

    public func tailCursor() async throws(NotificationStorageError) -> TailCursor {
        try await run { client, logger in
            // Every transaction that commits from now on has an id at or above the snapshot's xmin; of those at or
            // above it, the ones the snapshot sees had committed already and are left out by the tail.
            let rows = try await client.query("SELECT pg_current_snapshot()::text", logger: logger)
            guard let snapshot = try await rows.decode(String.self).first(),
                  let xmin = snapshot.split(separator: ":").first.flatMap({ UInt64($0) })
            else {
                throw NotificationStorageError(.failure, underlying: nil)
            }
            return TailCursor(transaction: xmin, position: 0, snapshot: snapshot)
        }
    }

    public func tail(after cursor: TailCursor, types: [String]?, limit: Int) async throws(NotificationStorageError) -> [TailedEvent] {
        try await run { client, logger in
            // Only transactions older than the current snapshot's xmin: they have all ended, so no event can still
            // appear before the ones read here. (The text column is named apart: ORDER BY would take its text.)
            let rows = try await client.query(
                """
                SELECT e.txid::text AS txid_text, e.position, e.event::text FROM notifications.events AS e
                WHERE (e.txid, e.position) > (\(String(cursor.transaction))::xid8, \(cursor.position))
                  AND e.txid < pg_snapshot_xmin(pg_current_snapshot())
                  AND (\(cursor.snapshot)::text IS NULL OR NOT pg_visible_in_snapshot(e.txid, \(cursor.snapshot)::pg_snapshot))
                  AND (\(types)::text[] IS NULL OR e.type = ANY (\(types)::text[]))
                ORDER BY e.txid, e.position
                LIMIT \(limit)
                """,
                logger: logger
            )
            return try await Self.tailed(rows, snapshot: cursor.snapshot)
        }
    }

    /// Rows of (transaction as text, position, event JSON) as tailed events.
    private static func tailed(_ rows: PostgresRowSequence, snapshot: String?) async throws -> [TailedEvent] {
        var events: [TailedEvent] = []
        for try await (transaction, position, document) in rows.decode((String, Int64, String).self) {
            guard let transaction = UInt64(transaction) else { continue }
            let event = try decoder.decode(AccountEvent.self, from: Data(document.utf8))
            events.append(TailedEvent(cursor: TailCursor(transaction: transaction, position: position, snapshot: snapshot), event: event))
        }
        return events
    }

    public func registerTailReader(_ id: UUID, start: TailCursor, leaseUntil: Timestamp, at now: Timestamp) async throws(NotificationStorageError) {
        try await run { client, logger in
            try await client.query("DELETE FROM notifications.tail_readers WHERE lease_until <= \(now.date)", logger: logger)
            try await client.query(
                """
                INSERT INTO notifications.tail_readers (reader_id, start_snapshot, acknowledged_txid, acknowledged_position, lease_until)
                VALUES (\(id), \(start.snapshot)::text::pg_snapshot, \(String(start.transaction))::xid8, \(start.position), \(leaseUntil.date))
                """,
                logger: logger
            )
        }
    }

    public func renewTailReader(_ id: UUID, acknowledged: TailCursor?, leaseUntil: Timestamp, at now: Timestamp) async throws(NotificationStorageError) -> Bool {
        try await run { client, logger in
            // Acknowledgements only move forward: both columns are set from the old row's values when the new
            // place is later (every expression of an UPDATE reads the row as it was).
            let transaction = acknowledged.map { String($0.transaction) }
            let position = acknowledged?.position
            let rows = try await client.query(
                """
                UPDATE notifications.tail_readers SET lease_until = \(leaseUntil.date),
                    acknowledged_txid = CASE WHEN (\(transaction)::xid8, \(position)::bigint) > (acknowledged_txid, acknowledged_position)
                        THEN \(transaction)::xid8 ELSE acknowledged_txid END,
                    acknowledged_position = CASE WHEN (\(transaction)::xid8, \(position)::bigint) > (acknowledged_txid, acknowledged_position)
                        THEN \(position)::bigint ELSE acknowledged_position END
                WHERE reader_id = \(id) AND lease_until > \(now.date)
                RETURNING 1
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).first() != nil
        }
    }

    public func removeTailReader(_ id: UUID) async throws(NotificationStorageError) {
        try await run { client, logger in
            try await client.query("DELETE FROM notifications.tail_readers WHERE reader_id = \(id)", logger: logger)
        }
    }

    public func liveTailReaders(at now: Timestamp) async throws(NotificationStorageError) -> [UUID] {
        try await run { client, logger in
            let rows = try await client.query("SELECT reader_id FROM notifications.tail_readers WHERE lease_until > \(now.date)", logger: logger)
            var readers: [UUID] = []
            for try await id in rows.decode(UUID.self) { readers.append(id) }
            return readers
        }
    }

    public func tailReadersBehind(_ readers: [UUID], eventIds: [UUID], at now: Timestamp) async throws(NotificationStorageError) -> Int? {
        let ids = Array(Set(eventIds))
        return try await run { client, logger in
            // A reader is behind on an event its tail gives (not seen by its start snapshot) that is past what it
            // acknowledged. Events stored before migration 4 (no txid) are older than any reader.
            let rows = try await client.query(
                """
                SELECT (SELECT count(*) FROM notifications.events WHERE event_id = ANY (\(ids)::uuid[])),
                       (SELECT count(*) FROM notifications.tail_readers AS r
                        WHERE r.reader_id = ANY (\(readers)::uuid[]) AND r.lease_until > \(now.date)
                          AND EXISTS (
                              SELECT 1 FROM notifications.events AS e
                              WHERE e.event_id = ANY (\(ids)::uuid[]) AND e.txid IS NOT NULL
                                AND (e.txid, e.position) > (r.acknowledged_txid, r.acknowledged_position)
                                AND NOT (r.start_snapshot IS NOT NULL AND pg_visible_in_snapshot(e.txid, r.start_snapshot))
                          ))
                """,
                logger: logger
            )
            guard let (stored, behind) = try await rows.decode((Int, Int).self).first() else { return nil }
            return stored < ids.count ? nil : behind
        }
    }

    public func logWebhookAttempt(_ attempt: WebhookAttempt) async throws(NotificationStorageError) {
        try await run { client, logger in
            try await client.query(
                """
                INSERT INTO notifications.webhook_attempts (endpoint, event_id, attempt, status_code, error, duration_ms, attempted_at)
                VALUES (\(attempt.endpoint), \(attempt.eventId), \(attempt.attempt), \(attempt.statusCode), \(attempt.error),
                        \(attempt.durationMilliseconds), \(attempt.at.date))
                """,
                logger: logger
            )
        }
    }

    public func webhookAttempts(endpoint: String, limit: Int) async throws(NotificationStorageError) -> [WebhookAttempt] {
        try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT event_id, attempt, status_code, error, duration_ms, attempted_at FROM notifications.webhook_attempts
                WHERE endpoint = \(endpoint) ORDER BY id DESC LIMIT \(limit)
                """,
                logger: logger
            )
            var attempts: [WebhookAttempt] = []
            for try await (eventId, attempt, status, error, duration, at) in rows.decode((UUID, Int32, Int32?, String?, Int32, Date).self) {
                attempts.append(WebhookAttempt(
                    endpoint: endpoint, eventId: eventId, attempt: Int(attempt), statusCode: status.map(Int.init),
                    error: error, durationMilliseconds: Int(duration), at: Timestamp(at)
                ))
            }
            return attempts
        }
    }

    public func webhookEndpoints() async throws(NotificationStorageError) -> [StoredWebhookEndpoint] {
        try await run { client, logger in
            let rows = try await client.query(
                "SELECT name, url, types, sealed_secret, created_at FROM notifications.webhook_endpoints ORDER BY name",
                logger: logger
            )
            var endpoints: [StoredWebhookEndpoint] = []
            for try await (name, url, types, sealed, created) in rows.decode((String, String, [String]?, String, Date).self) {
                endpoints.append(StoredWebhookEndpoint(name: name, url: url, types: types, sealedSecret: sealed, createdAt: Timestamp(created)))
            }
            return endpoints
        }
    }

    public func addWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, groupOwner: String?, limit: Int, at now: Timestamp) async throws(NotificationStorageError) -> WebhookEndpointAddition {
        let group = "webhook:\(endpoint.name)"
        let types = endpoint.types.map { Array(Set($0)).sorted() }
        return try await transaction { connection, logger in
            // Adds from every replica queue here (the mode conflicts with itself and with the inserts and deletes of
            // others), so the count below is still true at the insert.
            try await connection.query("LOCK TABLE notifications.webhook_endpoints IN SHARE ROW EXCLUSIVE MODE", logger: logger)
            let taken = try await connection.query(
                "SELECT count(*), count(*) FILTER (WHERE name = \(endpoint.name)) FROM notifications.webhook_endpoints", logger: logger
            )
            guard let (count, named) = try await taken.decode((Int, Int).self).first() else { return .limitReached }
            guard named == 0 else { return .nameTaken }
            guard count < limit else { return .limitReached }
            let added = try await connection.query(
                """
                INSERT INTO notifications.webhook_endpoints (name, url, types, sealed_secret, created_at)
                VALUES (\(endpoint.name), \(endpoint.url), \(types), \(endpoint.sealedSecret), \(endpoint.createdAt.date))
                ON CONFLICT (name) DO NOTHING RETURNING 1
                """,
                logger: logger
            )
            guard try await added.decode(Int.self).first() != nil else { return .nameTaken }
            // A former group of this name (a file's endpoint since removed, or deliveries a publish queued while
            // an endpoint of this name was being removed) starts over: its events were for another receiver.
            try await connection.query("DELETE FROM notifications.deliveries WHERE group_name = \(group)", logger: logger)
            try await connection.query("DELETE FROM notifications.dead_letters WHERE group_name = \(group)", logger: logger)
            try await connection.query("DELETE FROM notifications.webhook_attempts WHERE endpoint = \(endpoint.name)", logger: logger)
            try await connection.query(
                """
                INSERT INTO notifications.groups (name, types, created_at, owner) VALUES (\(group), \(types), \(now.date), \(groupOwner))
                ON CONFLICT (name) DO UPDATE SET types = excluded.types, created_at = excluded.created_at, owner = excluded.owner
                """,
                logger: logger
            )
            return .added
        }
    }

    public func removeWebhookEndpoint(named name: String) async throws(NotificationStorageError) -> Int? {
        let group = "webhook:\(name)"
        return try await transaction { connection, logger in
            let removed = try await connection.query("DELETE FROM notifications.webhook_endpoints WHERE name = \(name) RETURNING 1", logger: logger)
            guard try await removed.decode(Int.self).first() != nil else { return nil }
            // The group first: a publish committing after this no longer queues for it. One that read the groups
            // before may still queue a delivery here; nothing claims or counts it (the sweeps join the groups), and
            // adding an endpoint of this name again drops it.
            try await connection.query("DELETE FROM notifications.groups WHERE name = \(group)", logger: logger)
            let queued = try await connection.query("WITH gone AS (DELETE FROM notifications.deliveries WHERE group_name = \(group) RETURNING 1) SELECT count(*) FROM gone", logger: logger)
            let dead = try await connection.query("WITH gone AS (DELETE FROM notifications.dead_letters WHERE group_name = \(group) RETURNING 1) SELECT count(*) FROM gone", logger: logger)
            try await connection.query("DELETE FROM notifications.webhook_attempts WHERE endpoint = \(name)", logger: logger)
            return (try await queued.decode(Int.self).first() ?? 0) + (try await dead.decode(Int.self).first() ?? 0)
        }
    }

    public func checkHealth() async throws(NotificationStorageError) {
        try await run { client, logger in
            try await client.query("SELECT 1", logger: logger)
        }
    }

    /// LISTEN on `notifications_published` (migration 7's triggers), on a connection of its own.
    public func watchPublished(_ changed: @escaping @Sendable () -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: "notifications_published") { notifications in
                changed()
                for try await _ in notifications {
                    changed()
                }
            }
        }
    }

    // MARK: Helpers

    private static let decoder = JSONDecoder()

    /// One statement on the pool, its failures classified.
    @discardableResult
    public func eraseDeletedAccounts(graceCutoff: Timestamp, limit: Int, at now: Timestamp) async throws(NotificationStorageError) -> Int {
        let (client, logger) = (client, logger)
        do {
            return try await OperationTimeout.run(operationTimeout) {
                try await client.withTransaction(logger: logger) { connection in
                    // One snapshot for the whole statement, and a refusal (40001) instead of a lost erasure when an
                    // event of the account is stored after it: that append bumps the erasure's generation, which this
                    // statement may then not overwrite with the generation it has erased.
                    try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
                    let rows = try await connection.query(
                        """
                        WITH ready AS (
                            SELECT r.account_id, r.generation FROM notifications.erasures AS r
                            WHERE r.erased_generation IS DISTINCT FROM r.generation
                              AND (r.requested_at < \(graceCutoff.date) OR NOT EXISTS (
                                  SELECT 1 FROM notifications.groups AS g JOIN notifications.deliveries AS d
                                      ON d.group_name = g.name AND d.account_id = r.account_id
                              ))
                            ORDER BY r.requested_at
                            LIMIT \(limit)
                            FOR UPDATE OF r SKIP LOCKED
                        ), doomed AS (
                            SELECT e.position, e.account_id FROM notifications.events AS e JOIN ready AS r ON e.account_id = r.account_id
                            WHERE e.type <> 'deletingAccount'
                        ), undelivered AS (
                            DELETE FROM notifications.deliveries AS d USING notifications.groups AS g, doomed
                            WHERE d.group_name = g.name AND d.account_id = doomed.account_id AND d.position = doomed.position
                        ), unburied AS (
                            DELETE FROM notifications.dead_letters AS l USING notifications.groups AS g, doomed
                            WHERE l.group_name = g.name AND l.position = doomed.position
                        ), erased AS (
                            DELETE FROM notifications.events WHERE position IN (SELECT position FROM doomed)
                        ), marked AS (
                            UPDATE notifications.erasures AS r SET erased_generation = ready.generation, erased_at = \(now.date)
                            FROM ready WHERE r.account_id = ready.account_id
                            RETURNING 1
                        )
                        SELECT count(*) FROM marked
                        """,
                        logger: logger
                    )
                    return try await rows.decode(Int.self).first() ?? 0
                }
            }
        } catch {
            // An event stored for an account while it was being erased: the next sweep erases it with the rest.
            if Self.isSerializationFailure(error) { return 0 }
            throw classify(error)
        }
    }

    public func prune(before cutoff: Timestamp, limit: Int) async throws(NotificationStorageError) -> Int {
        try await run { client, logger in
            let rows = try await client.query(
                """
                WITH old AS (
                    SELECT e.position FROM notifications.events AS e
                    WHERE e.occurred_at < \(cutoff.date)
                      AND NOT EXISTS (
                          SELECT 1 FROM notifications.groups AS g JOIN notifications.deliveries AS d
                              ON d.group_name = g.name AND d.account_id = e.account_id AND d.position = e.position
                      )
                      AND NOT EXISTS (
                          SELECT 1 FROM notifications.groups AS g JOIN notifications.dead_letters AS l
                              ON l.group_name = g.name AND l.position = e.position
                      )
                    ORDER BY e.occurred_at
                    LIMIT \(limit)
                ), pruned AS (
                    DELETE FROM notifications.events WHERE position IN (SELECT position FROM old) RETURNING 1
                ), log AS (
                    DELETE FROM notifications.webhook_attempts WHERE attempted_at < \(cutoff.date)
                ), records AS (
                    DELETE FROM notifications.erasures WHERE erased_at < \(cutoff.date) AND erased_generation = generation
                )
                SELECT count(*) FROM pruned
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).first() ?? 0
        }
    }

    static func isSerializationFailure(_ error: any Error) -> Bool {
        var error = error
        if let transaction = error as? PostgresTransactionError, let cause = transaction.closureError ?? transaction.commitError {
            error = cause
        }
        return (error as? PSQLError)?.serverInfo?[.sqlState] == "40001"
    }

    private func run<T: Sendable>(
        operation: String = #function,
        _ body: @escaping @Sendable (PostgresClient, Logger) async throws -> T
    ) async throws(NotificationStorageError) -> T {
        let (client, logger, timeout) = (client, logger, operationTimeout)
        do {
            return try await StatementSpan.run(operation, schema: "notifications") {
                try await OperationTimeout.run(timeout) { try await body(client, logger) }
            }
        } catch {
            throw classify(error)
        }
    }

    /// One transaction on the pool, bounded as a statement is, its failures classified.
    private func transaction<T: Sendable>(
        operation: String = #function,
        _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws(NotificationStorageError) -> T {
        try await run(operation: operation) { client, logger in
            try await client.withTransaction(logger: logger) { connection in try await body(connection, logger) }
        }
    }

    private func classify(_ error: any Error) -> NotificationStorageError {
        if let error = error as? NotificationStorageError {
            return error
        }
        if let unavailable = PostgresFailure.unavailability(of: error) {
            return NotificationStorageError(.unavailable, underlying: unavailable)
        }
        if error is CancellationError {
            return NotificationStorageError(.unavailable, underlying: error)
        }
        logger.error("notification storage query failed", metadata: ["konto.error": "\(PostgresFailure.summary(of: error))"])
        return NotificationStorageError(.failure, underlying: error)
    }
}


extension AsyncSequence {
    /// The first element, if any (queries here return one row or none).
    fileprivate func first() async throws -> Element? {
        for try await element in self {
            return element
        }
        return nil
    }
}
