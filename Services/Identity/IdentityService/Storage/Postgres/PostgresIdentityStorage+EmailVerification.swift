import Foundation
import KontoContracts
import KontoModel
import NIOCore
import Logging
import PostgresNIO

extension PostgresIdentityStorage {
    public func createEmailVerification(
        tokenHash: [UInt8], codeDigest: [UInt8]?, accountId: String, address: String, isUserId: Bool, expiresAt: Timestamp, events: [AccountEvent]
    ) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                """
                SELECT 1 FROM identity.credentials
                WHERE account_id = \(accountId) AND (NOT \(isUserId) OR user_id = \(address)) AND NOT pending FOR SHARE
                """,
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
            try await connection.query(
                """
                INSERT INTO identity.email_verifications (token_hash, code_digest, account_id, address, is_user_id, expires_at)
                VALUES (\(ByteBuffer(bytes: tokenHash)), \(codeDigest.map { ByteBuffer(bytes: $0) }), \(accountId), \(address), \(isUserId), \(expiresAt.date))
                """,
                logger: logger
            )
            try await Self.append(events, on: connection, logger: logger)
        }
    }

    public func pendingEmailVerifications(accountId: String, at now: Timestamp) async throws(IdentityStorageError) -> [IdentityAccountExport.PendingVerification] {
        try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT address, expires_at FROM identity.email_verifications
                WHERE account_id = \(accountId) AND expires_at > \(now.date) ORDER BY expires_at
                """,
                logger: logger
            )
            var pending: [IdentityAccountExport.PendingVerification] = []
            for try await (address, expiresAt) in rows.decode((String, Date).self) {
                pending.append(.init(address: address, expiresAt: Timestamp(expiresAt)))
            }
            return pending
        }
    }

    public func confirmEmailVerification(
        tokenHash: [UInt8], accountId: String?, at now: Timestamp, events: @escaping @Sendable (String) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> String? {
        try await transaction { connection, logger in
            // Deleting the token is what makes it single-use: of two concurrent confirmations, one deletes it. Bound to
            // the confirmer's account when it has one: another account's token is left alone.
            let rows = try await connection.query(
                """
                DELETE FROM identity.email_verifications
                WHERE token_hash = \(ByteBuffer(bytes: tokenHash)) AND (\(accountId)::text IS NULL OR account_id = \(accountId))
                RETURNING account_id, address, is_user_id, expires_at
                """,
                logger: logger
            )
            return try await Self.verify(rows, at: now, on: connection, logger: logger, events: events)
        }
    }

    public func confirmEmailVerification(accountId: String, codeDigest: [UInt8], at now: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            // As with the token: the DELETE takes the code (and its link) once. Bound to the account, so a code is
            // nothing to another account's session.
            let rows = try await connection.query(
                """
                DELETE FROM identity.email_verifications
                WHERE account_id = \(accountId) AND code_digest = \(ByteBuffer(bytes: codeDigest)) RETURNING account_id, address, is_user_id, expires_at
                """,
                logger: logger
            )
            return try await Self.verify(rows, at: now, on: connection, logger: logger) { _ in events } != nil
        }
    }

    /// Verifies the address of the verification just deleted (`rows`), if it has not expired and is still the
    /// account's, with `events`; the account's id.
    private static func verify(
        _ rows: PostgresRowSequence, at now: Timestamp, on connection: PostgresConnection, logger: Logger, events: @Sendable (String) -> [AccountEvent]
    ) async throws -> String? {
        var token: (accountId: String, address: String, isUserId: Bool, expiresAt: Date)?
        for try await (accountId, address, isUserId, expiresAt) in rows.decode((String, String, Bool, Date).self) {
            token = (accountId, address, isUserId, expiresAt)
        }
        guard let token, now < Timestamp(token.expiresAt) else { return nil }
        let update: PostgresQuery = if token.isUserId {
            """
            UPDATE identity.credentials SET email_verified_at = \(now.date)
            WHERE account_id = \(token.accountId) AND user_id = \(token.address) AND NOT pending RETURNING 1
            """
        } else {
            """
            UPDATE identity.credentials SET verified_email = \(token.address)
            WHERE account_id = \(token.accountId) AND NOT pending RETURNING 1
            """
        }
        let updated = try await connection.query(update, logger: logger)
        guard try await updated.decode(Int.self).all().count == 1 else { return nil }
        try await append(events(token.accountId), on: connection, logger: logger)
        return token.accountId
    }

    public func verifyAddress(accountId: String, at now: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE identity.credentials SET email_verified_at = \(now.date), proven_at = COALESCE(proven_at, \(now.date))
                WHERE account_id = \(accountId) AND NOT pending AND user_id IS NOT NULL AND email_verified_at IS NULL RETURNING 1
                """,
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { return false }
            try await Self.append(events, on: connection, logger: logger)
            return true
        }
    }
}
