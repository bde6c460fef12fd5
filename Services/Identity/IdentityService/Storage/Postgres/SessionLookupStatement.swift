import Foundation
import NIOCore
import PostgresNIO

/// The session lookup of every authenticated call, prepared once per pooled connection by postgres-nio: one index
/// probe on the token hash, joined with the account for its userId (none: the account is anonymous) and for its
/// credential version (a session created under another one is no session).
struct SessionLookupStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT s.id, s.account_id, s.created_at, s.idle_expires_at, s.absolute_expires_at, s.privileged_until,
               s.credential_version, c.user_id, s.assurance_level, c.email_verified_at IS NOT NULL, c.verified_email
        FROM identity.sessions s JOIN identity.credentials c
            ON c.account_id = s.account_id AND NOT c.pending AND c.credential_version = s.credential_version
        WHERE s.token_hash = $1
        """

    typealias Row = (String, String, Date, Date, Date, Date?, Int64, String?, Int16, Bool, String?)

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
