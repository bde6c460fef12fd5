import Foundation
import KontoModel
import Logging
import PostgresNIO

/// A producer's outbox table in PostgreSQL (`<schema>.outbox`: position, event_id, account_id, type, event jsonb,
/// occurred_at, with an insert trigger notifying `<schema>_outbox`), drained by the relay.
public struct PostgresOutbox: Sendable {
    private let client: PostgresClient
    private let schema: StaticString
    private let logger: Logger

    /// `schema` is the service's own literal (`identity`, `profile`), never input.
    public init(client: PostgresClient, schema: StaticString, logger: Logger) {
        self.client = client
        self.schema = schema
        self.logger = logger
    }

    /// The SQL creating the table's notify trigger, for the producer's migrations (run in its schema).
    public static func notifyTriggerStatements(schema: StaticString) -> [String] {
        [
            """
            CREATE FUNCTION notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('\(schema)_outbox', '');
                RETURN NULL;
            END
            $$
            """,
            "CREATE TRIGGER outbox_notify AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION notify_outbox()",
        ]
    }

    /// Appends `events` to `<schema>.outbox`, in order, in one statement on `connection` (inside the change's
    /// transaction).
    public static func append(_ events: [AccountEvent], schema: StaticString, on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        let columns = try AccountEventColumns(events)
        let query: PostgresQuery = "\(outboxInsert: columns, schema: schema, after: nil)"
        try await connection.query(query, logger: logger)
    }

    /// See ``OutboxStore/drainOutbox(limit:publish:)``: the oldest rows locked `FOR UPDATE`, deleted in the same
    /// transaction once `publish` returned.
    public func drain(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int {
        do {
            return try await client.withTransaction(logger: logger) { connection in
                var select = PostgresQuery(unsafeSQL: "SELECT position, event::text FROM \(schema).outbox ORDER BY position LIMIT $1 FOR UPDATE")
                select.binds.append(limit)
                let rows = try await connection.query(select, logger: logger)
                var positions: [Int64] = []
                var events: [AccountEvent] = []
                for try await (position, document) in rows.decode((Int64, String).self) {
                    positions.append(position)
                    events.append(try JSONDecoder().decode(AccountEvent.self, from: Data(document.utf8)))
                }
                guard !events.isEmpty else { return 0 }
                try await publish(events)
                var delete = PostgresQuery(unsafeSQL: "DELETE FROM \(schema).outbox WHERE position = ANY($1)")
                delete.binds.append(positions)
                try await connection.query(delete, logger: logger)
                return events.count
            }
        } catch let error as PostgresTransactionError {
            // The relay reports the cause (Notifications unreachable, the database gone), not the wrapper.
            throw error.closureError ?? error.beginError ?? error.commitError ?? error
        }
    }

    /// See ``OutboxStore/watchOutbox(_:)``: LISTEN on `<schema>_outbox`, on a connection of its own.
    public func watch(_ changed: @escaping @Sendable () -> Void) async throws {
        let channel = "\(schema)_outbox"
        try await client.withConnection { connection in
            try await connection.listen(on: channel) { notifications in
                // Anything inserted before the LISTEN took effect is found by this first wake-up.
                changed()
                for try await _ in notifications {
                    changed()
                }
            }
        }
    }

    /// The pending events, oldest first (tests' view).
    public func pending(limit: Int) async throws -> [AccountEvent] {
        var query = PostgresQuery(unsafeSQL: "SELECT event::text FROM \(schema).outbox ORDER BY position LIMIT $1")
        query.binds.append(limit)
        let rows = try await client.query(query, logger: logger)
        var events: [AccountEvent] = []
        for try await document in rows.decode(String.self) {
            events.append(try JSONDecoder().decode(AccountEvent.self, from: Data(document.utf8)))
        }
        return events
    }
}
