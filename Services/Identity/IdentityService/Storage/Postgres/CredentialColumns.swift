import Foundation
import KontoModel
import PostgresNIO

/// The one list of a stored credential's columns (of `identity.credentials AS c`) and its one decoder. Every read of a
/// credential goes through them (the session lookup, the login lookup, the reads by accountId and userId), so the
/// account's facts (``StoredCredential/facts(userIdType:)``) come from the same columns however the account was found.
/// The password hash is not among them: only the reads that check a password select it, after these.
enum CredentialColumns {
    static let sql = "c.account_id, c.user_id, c.normalized_user_id, c.created_at, c.credential_version, c.email_verified_at, c.verified_email, c.disabled_at"
    static let count = 8

    /// The credential in the columns from `first` on; nil when they are NULL (an outer join that found none).
    static func decode(_ row: PostgresRandomAccessRow, from first: Int, passwordHash: String? = nil) throws -> StoredCredential? {
        guard let accountId = try row[first].decode(String?.self) else { return nil }
        return StoredCredential(
            accountId: accountId,
            userId: try row[first + 1].decode(String?.self),
            normalizedUserId: try row[first + 2].decode(String?.self),
            passwordHash: passwordHash,
            createdAt: Timestamp(try row[first + 3].decode(Date.self)),
            credentialVersion: try row[first + 4].decode(Int64.self),
            emailVerifiedAt: try row[first + 5].decode(Date?.self).map(Timestamp.init),
            verifiedEmail: try row[first + 6].decode(String?.self),
            disabledAt: try row[first + 7].decode(Date?.self).map(Timestamp.init)
        )
    }
}
