import Foundation
import NIOCore
import PostgresNIO

/// The session lookup of every authenticated call, prepared once per pooled connection by postgres-nio: one index
/// probe on the token hash, joined with the account for its userId (none: the account is anonymous).
struct SessionLookupStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT s.id, s.account_id, s.created_at, s.idle_expires_at, s.absolute_expires_at, s.privileged_until,
               c.user_id
        FROM identity.sessions s JOIN identity.credentials c ON c.account_id = s.account_id AND NOT c.pending
        WHERE s.token_hash = $1
        """

    typealias Row = (String, String, Date, Date, Date, Date?, String?)

    var tokenHash: ByteBuffer

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(tokenHash)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
