import NIOCore
import KontoPostgres
import PostgresNIO

/// The batched read on one event loop's pinned connection, prepared once per connection, as futures completed on
/// that loop: a batch costs the driver a bind and an execute, and no task, row sequence or thread hop.
///
/// Used by one ``EventLoopBatchedLookup``, which has at most one batch out, so no two batches prepare at once.
final class PinnedProfileRead: @unchecked Sendable {
    // @unchecked: `prepared` is touched on `eventLoop` only.

    /// Every account asked for in one statement; the read connections force its generic plan, see
    /// ``PostgresProfileStorage/readConfiguration(_:)``. Every column is text: rows of a statement prepared this
    /// way arrive in binary but are described as text, which reads the same only for text.
    static let sql = "SELECT account_id, version::text, details::text FROM profile_accounts WHERE account_id = ANY($1)"

    let eventLoop: any EventLoop
    private let reads: PinnedConnections
    private var prepared: (connection: PostgresConnection, query: PreparedQuery)?

    init(eventLoop: any EventLoop, reads: PinnedConnections) {
        self.eventLoop = eventLoop
        self.reads = reads
    }

    /// The rows of `accountIds` that exist, keyed by account.
    func rows(for accountIds: [String]) -> EventLoopFuture<[String: PostgresProfileStorage.StoredRow]> {
        if let prepared = self.prepared, !prepared.connection.isClosed {
            return self.execute(prepared.query, on: prepared.connection, accountIds: accountIds)
        }
        // No prepared statement, or its connection closed: a fresh connection, prepared once.
        return self.reads.connectionFuture(on: self.eventLoop).hop(to: self.eventLoop).flatMap { connection in
            guard !connection.isClosed else { return self.closed() }
            return connection.prepare(query: Self.sql).flatMap { query in
                self.prepared = (connection, query)
                return self.execute(query, on: connection, accountIds: accountIds)
            }
        }
    }

    /// The driver's future-based API never answers a statement written to a connection that has closed, so every
    /// statement goes out only after checking, on the connection's own loop (where it cannot close meanwhile).
    private func closed<Value>() -> EventLoopFuture<Value> {
        self.eventLoop.makeFailedFuture(StorageUnavailableError(.connectionFailed))
    }

    private func execute(
        _ query: PreparedQuery,
        on connection: PostgresConnection,
        accountIds: [String]
    ) -> EventLoopFuture<[String: PostgresProfileStorage.StoredRow]> {
        guard !connection.isClosed else { return self.closed() }
        var value = ByteBuffer()
        accountIds.encode(into: &value, context: .default)
        let found = NIOLoopBoundBox([String: PostgresProfileStorage.StoredRow](minimumCapacity: accountIds.count), eventLoop: self.eventLoop)
        return query.execute([PostgresData(type: .textArray, formatCode: .binary, value: value)]) { row in
            let (accountId, versionText, document) = try row.decode((String, String, String).self)
            guard let version = Int64(versionText) else { throw UnreadableVersion() }
            found.value[accountId] = PostgresProfileStorage.StoredRow(version: version, document: document)
        }
        .map { found.value }
    }
}

/// A version column that is not an integer (it always is: the column is `bigint`).
struct UnreadableVersion: Error {}
