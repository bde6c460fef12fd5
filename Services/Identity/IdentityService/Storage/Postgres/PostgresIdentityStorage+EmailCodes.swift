import Foundation
import KontoModel
import NIOCore
import PostgresNIO

extension PostgresIdentityStorage {
    public func createEmailCode(accountId: String, codeDigest: [UInt8], credentialVersion: Int64, expiresAt: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            // Held against a concurrent password or userId change (which deletes the account's codes) until commit.
            let rows = try await connection.query(
                """
                SELECT 1 FROM identity.credentials
                WHERE account_id = \(accountId) AND credential_version = \(credentialVersion) AND NOT pending FOR SHARE
                """,
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
            try await connection.query(
                """
                INSERT INTO identity.email_codes (code_digest, account_id, credential_version, expires_at)
                VALUES (\(ByteBuffer(bytes: codeDigest)), \(accountId), \(credentialVersion), \(expiresAt.date))
                """,
                logger: logger
            )
            try await Self.append(events, on: connection, logger: logger)
        }
    }

    public func useEmailCode(
        accountId: String, codeDigest: [UInt8], at now: Timestamp, events: @escaping @Sendable (Bool) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> UsedEmailCode? {
        try await transaction { connection, logger in
            // Deleting the code is what makes it single-use: of two concurrent sign-ins with it, one deletes it.
            let used = try await connection.query(
                """
                DELETE FROM identity.email_codes c USING identity.credentials cr
                WHERE c.code_digest = \(ByteBuffer(bytes: codeDigest)) AND c.account_id = \(accountId) AND c.expires_at > \(now.date)
                    AND cr.account_id = c.account_id AND cr.credential_version = c.credential_version AND NOT cr.pending
                RETURNING c.credential_version, c.expires_at
                """,
                logger: logger
            )
            guard let (version, expiresAt) = try await used.decode((Int64, Date).self).all().first else { return nil }
            try await connection.query("DELETE FROM identity.email_codes WHERE account_id = \(accountId)", logger: logger)
            let verified = try await connection.query(
                """
                UPDATE identity.credentials SET email_verified_at = \(now.date)
                WHERE account_id = \(accountId) AND email_verified_at IS NULL RETURNING 1
                """,
                logger: logger
            )
            let newlyVerified = try await verified.decode(Int.self).all().count == 1
            try await Self.append(events(newlyVerified), on: connection, logger: logger)
            return UsedEmailCode(credentialVersion: version, expiresAt: Timestamp(expiresAt))
        }
    }
}
