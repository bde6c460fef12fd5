import Foundation
import KontoContracts
import KontoModel
import NIOCore
import PostgresNIO

/// Audit records as columns, one array per column, for one `unnest` insert (PostgresNIO binds no arrays of optionals:
/// nil travels as the empty text, which no field holds otherwise, and comes back through NULLIF).
struct AuditColumns: Sendable {
    var ids: [UUID] = []
    var times: [Date] = []
    var accountIds: [String] = []
    var actorTypes: [String] = []
    var actorIds: [String] = []
    var types: [String] = []
    var operations: [String] = []
    var facts: [String] = []
    var personal: [String] = []
    /// Hex.
    var digests: [String] = []

    init(_ records: [AuditRecord]) {
        for record in records {
            ids.append(record.id)
            times.append(record.occurredAt.date)
            accountIds.append(record.accountId ?? "")
            actorTypes.append(record.actorType.rawValue)
            actorIds.append(record.actorId ?? "")
            types.append(record.type)
            operations.append(record.operation ?? "")
            facts.append(record.factsText)
            personal.append(record.personalText ?? "")
            digests.append(AuditChain.hex(record.personalDigest))
        }
    }

    var isEmpty: Bool { ids.isEmpty }
}

extension PostgresQuery.StringInterpolation {
    /// The audit insert of `columns` as one data-modifying `WITH` part's body, beside the outbox's
    /// (``appendInterpolation(outboxInsert:schema:after:)``): once per row of the part named `after`, or
    /// unconditionally when nil.
    mutating func appendInterpolation(auditInsert columns: AuditColumns, after source: StaticString?) {
        appendLiteral("""
            INSERT INTO identity.audit_log
                (entry_id, occurred_at, account_id, actor_type, actor_id, type, operation, facts, personal, personal_digest)
            SELECT a.entry_id, a.occurred_at, NULLIF(a.account_id, ''), a.actor_type, NULLIF(a.actor_id, ''), a.type, NULLIF(a.operation, ''),
                   a.facts, NULLIF(a.personal, ''), decode(a.digest, 'hex')
            FROM \(source.map { "\($0), " } ?? "")unnest(
            """)
        appendInterpolation(columns.ids)
        appendLiteral("::uuid[], ")
        appendInterpolation(columns.times)
        appendLiteral("::timestamptz[], ")
        appendInterpolation(columns.accountIds)
        appendLiteral("::text[], ")
        appendInterpolation(columns.actorTypes)
        appendLiteral("::text[], ")
        appendInterpolation(columns.actorIds)
        appendLiteral("::text[], ")
        appendInterpolation(columns.types)
        appendLiteral("::text[], ")
        appendInterpolation(columns.operations)
        appendLiteral("::text[], ")
        appendInterpolation(columns.facts)
        appendLiteral("::text[], ")
        appendInterpolation(columns.personal)
        appendLiteral("::text[], ")
        appendInterpolation(columns.digests)
        appendLiteral("""
            ::text[])
                WITH ORDINALITY AS a(entry_id, occurred_at, account_id, actor_type, actor_id, type, operation, facts, personal, digest, ordinal)
            ORDER BY a.ordinal
            """)
    }
}

extension PostgresIdentityStorage {
    /// Appends audit records inside a transaction (a change's own, with its events).
    static func appendAudit(_ records: [AuditRecord], on connection: PostgresConnection, logger: Logger) async throws {
        guard !records.isEmpty else { return }
        try await connection.query("\(auditInsert: AuditColumns(records), after: nil)", logger: logger)
    }

    /// A deleted account's personal data leaves its audit entries (their ids, types and facts stay, and the chain still
    /// verifies: it covers the salted digest). An operator's call about the account (`admin.*`) keeps its personal
    /// data: it holds only the operator's client address (``AuditTrail/recordAdminCall``), never the account's; the
    /// entries of the changes it made (a new userId) carry the account's and go.
    static func eraseAudit(accountIds: [String], on connection: PostgresConnection, logger: Logger) async throws {
        guard !accountIds.isEmpty else { return }
        try await connection.query(
            """
            UPDATE identity.audit_log SET personal = NULL
            WHERE account_id = ANY(\(accountIds)::text[]) AND personal IS NOT NULL AND type NOT LIKE 'admin.%'
            """,
            logger: logger
        )
    }

    public func appendAudit(_ records: [AuditRecord]) async throws(IdentityStorageError) {
        guard !records.isEmpty else { return }
        try await run { client, logger in
            try await client.query("\(auditInsert: AuditColumns(records), after: nil)", logger: logger)
        }
    }

    public func appendAudit(_ records: [AuditRecord], whileAccountExists accountId: String) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            // FOR SHARE: a deletion (which erases the account's personal audit data) waits for this, or this for it.
            let rows = try await connection.query(
                "SELECT 1 FROM identity.credentials WHERE account_id = \(accountId) AND NOT pending FOR SHARE", logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { return false }
            try await Self.appendAudit(records, on: connection, logger: logger)
            return true
        }
    }

    public func sealAudit(limit: Int) async throws(IdentityStorageError) -> Int {
        try await transaction { connection, logger in
            // The chain row's lock makes one sealer at a time (replicas included); rows of transactions still open
            // are not visible yet and are sealed by a later call, after whatever is sealed now.
            let heads = try await connection.query(
                "SELECT head_position, head_hash FROM identity.audit_chain WHERE id = 1 FOR UPDATE", logger: logger
            )
            guard let (headPosition, headHash) = try await heads.decode((Int64, ByteBuffer).self).all().first else { return 0 }
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.auditColumns) FROM identity.audit_log
                WHERE position IS NULL ORDER BY sequence LIMIT \(limit)
                """,
                logger: logger
            )
            let entries = try await Self.decodeAudit(rows)
            guard !entries.isEmpty else { return 0 }
            var previous = Array(headHash.readableBytesView)
            var position = headPosition
            var sequences: [Int64] = []
            var positions: [Int64] = []
            var hashes: [String] = []
            for entry in entries {
                position += 1
                previous = AuditChain.link(previous: previous, position: position, record: entry.record)
                sequences.append(entry.sequence)
                positions.append(position)
                hashes.append(AuditChain.hex(previous))
            }
            try await connection.query(
                """
                UPDATE identity.audit_log AS a SET position = s.position, hash = decode(s.hash, 'hex')
                FROM unnest(\(sequences)::bigint[], \(positions)::bigint[], \(hashes)::text[]) AS s(sequence, position, hash)
                WHERE a.sequence = s.sequence
                """,
                logger: logger
            )
            try await connection.query(
                "UPDATE identity.audit_chain SET head_position = \(position), head_hash = \(ByteBuffer(bytes: previous)) WHERE id = 1",
                logger: logger
            )
            return entries.count
        }
    }

    public func auditChainState() async throws(IdentityStorageError) -> AuditChainState {
        try await run { client, logger in
            let rows = try await client.query(
                "SELECT anchor_position, anchor_hash, head_position, head_hash, anchor_occurred_at FROM identity.audit_chain WHERE id = 1", logger: logger
            )
            guard let (anchor, anchorHash, head, headHash, anchorAt) = try await rows.decode((Int64, ByteBuffer, Int64, ByteBuffer, Date?).self).all().first else {
                return AuditChainState.empty
            }
            return AuditChainState(
                anchorPosition: anchor, anchorHash: Array(anchorHash.readableBytesView), headPosition: head, headHash: Array(headHash.readableBytesView),
                anchorOccurredAt: anchorAt.map(Timestamp.init)
            )
        }
    }

    public func auditChain(after position: Int64, limit: Int) async throws(IdentityStorageError) -> [StoredAuditEntry] {
        try await run { client, logger in
            try await Self.decodeAudit(client.query(
                """
                SELECT \(unescaped: Self.auditColumns) FROM identity.audit_log
                WHERE position > \(position) ORDER BY position LIMIT \(limit)
                """,
                logger: logger
            ))
        }
    }

    public func auditEntries(_ query: AuditQuery) async throws(IdentityStorageError) -> [StoredAuditEntry] {
        try await run { client, logger in
            try await Self.decodeAudit(client.query(
                """
                SELECT \(unescaped: Self.auditColumns) FROM identity.audit_log
                WHERE (\(query.accountId)::text IS NULL OR account_id = \(query.accountId))
                  AND (\(query.actorId)::text IS NULL OR actor_id = \(query.actorId))
                  AND (\(query.type)::text IS NULL OR type = \(query.type))
                  AND (\(query.occurredAfter?.date)::timestamptz IS NULL OR occurred_at >= \(query.occurredAfter?.date))
                  AND (\(query.occurredBefore?.date)::timestamptz IS NULL OR occurred_at < \(query.occurredBefore?.date))
                  AND (\(query.beforeSequence)::bigint IS NULL OR sequence < \(query.beforeSequence))
                ORDER BY sequence DESC LIMIT \(query.limit)
                """,
                logger: logger
            ))
        }
    }

    public func pruneAudit(before cutoff: Timestamp, limit: Int) async throws(IdentityStorageError) -> Int {
        try await transaction { connection, logger in
            let anchors = try await connection.query(
                "SELECT anchor_position FROM identity.audit_chain WHERE id = 1 FOR UPDATE", logger: logger
            )
            guard let anchor = try await anchors.decode(Int64.self).all().first else { return 0 }
            // The oldest sealed entries, in the chain's order, up to the first one not older than the cutoff.
            let rows = try await connection.query(
                """
                SELECT position, occurred_at < \(cutoff.date), hash, occurred_at FROM identity.audit_log
                WHERE position > \(anchor) ORDER BY position LIMIT \(limit)
                """,
                logger: logger
            )
            var last: (Int64, ByteBuffer, Date)?
            for try await (position, old, hash, occurredAt) in rows.decode((Int64, Bool, ByteBuffer, Date).self) {
                guard old else { break }
                last = (position, hash, occurredAt)
            }
            guard let (position, hash, occurredAt) = last else { return 0 }
            let deleted = try await connection.query(
                "DELETE FROM identity.audit_log WHERE position > \(anchor) AND position <= \(position) RETURNING 1", logger: logger
            )
            let count = try await deleted.decode(Int.self).all().count
            try await connection.query(
                "UPDATE identity.audit_chain SET anchor_position = \(position), anchor_hash = \(hash), anchor_occurred_at = \(occurredAt) WHERE id = 1",
                logger: logger
            )
            return count
        }
    }

    private static let auditColumns =
        "sequence, entry_id, occurred_at, account_id, actor_type, actor_id, type, operation, facts, personal, personal_digest, position, hash"

    private static func decodeAudit(_ rows: PostgresRowSequence) async throws -> [StoredAuditEntry] {
        var entries: [StoredAuditEntry] = []
        for try await row in rows {
            let (sequence, id, occurredAt, accountId, actorType, actorId, type, operation, facts, personal, digest, position, hash) = try row.decode(
                (Int64, UUID, Date, String?, String, String?, String, String?, String, String?, ByteBuffer, Int64?, ByteBuffer?).self
            )
            let known = AuditActorType(rawValue: actorType)
            let record = AuditRecord(
                id: id, occurredAt: Timestamp(occurredAt), accountId: accountId, actorType: known ?? .system,
                actorId: actorId, type: type, operation: operation, factsText: facts, personalText: personal, personalDigest: Array(digest.readableBytesView)
            )
            entries.append(StoredAuditEntry(
                sequence: sequence, record: record, position: position, hash: hash.map { Array($0.readableBytesView) }, malformed: known == nil
            ))
        }
        return entries
    }
}
