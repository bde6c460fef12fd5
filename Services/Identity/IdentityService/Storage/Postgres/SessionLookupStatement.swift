import Foundation
import KontoModel
import NIOCore
import PostgresNIO

/// The session lookup of every authenticated call, prepared once per pooled connection by postgres-nio: one index
/// probe on the token hash, joined with the account for its userId (none: the account is anonymous) and for its
/// credential version (a session created under another one is no session).
struct SessionLookupStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT s.id, s.created_at, s.idle_expires_at, s.absolute_expires_at, s.privileged_until, s.credential_version, s.assurance_level,
               s.sign_in_method, \(CredentialColumns.sql)
        FROM identity.sessions s JOIN identity.credentials c
            ON c.account_id = s.account_id AND NOT c.pending AND c.credential_version = s.credential_version AND c.disabled_at IS NULL
        WHERE s.token_hash = $1
        """

    /// The session with its account's credential (no password hash); ``StoredSession/tokenHash`` is the caller's.
    typealias Row = StoredSession

    var tokenHash: ByteBuffer

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(tokenHash)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        let cells = row.makeRandomAccess()
        guard let account = try CredentialColumns.decode(cells, from: 8) else {
            throw PostgresDecodingError.Code.missingData
        }
        var session = StoredSession(
            id: try cells[0].decode(String.self),
            accountId: account.accountId,
            tokenHash: [],
            createdAt: Timestamp(try cells[1].decode(Date.self)),
            idleExpiresAt: Timestamp(try cells[2].decode(Date.self)),
            absoluteExpiresAt: Timestamp(try cells[3].decode(Date.self)),
            privilegedUntil: try cells[4].decode(Date?.self).map(Timestamp.init),
            credentialVersion: try cells[5].decode(Int64.self),
            assuranceLevel: Int(try cells[6].decode(Int16.self))
        )
        // How it was signed in: an ID token's `amr` names it (docs/OIDC.md).
        session.signInMethod = try cells[7].decode(String?.self)
        session.account = account
        return session
    }
}
