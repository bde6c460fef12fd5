import Foundation
import KontoModel
import NIOCore
import PostgresNIO

extension PostgresIdentityStorage {
    public func endAccessBeforeFirstProof(
        accountId: String, keeping: String?, keepingPassword: Bool, at now: Timestamp, events: @escaping @Sendable (AccessEnded) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> AccessEnded? {
        try await transaction { connection, logger in
            // One statement decides, under the row's lock: of two concurrent proofs, one is the first. An address
            // verified when the account was made (a provider vouched for it) was proven from the start.
            let claimed = try await connection.query(
                """
                UPDATE identity.credentials SET proven_at = \(now.date), credential_version = credential_version + 1,
                    password_hash = CASE WHEN \(keepingPassword) THEN password_hash ELSE NULL END
                WHERE account_id = \(accountId) AND NOT pending AND proven_at IS NULL
                  AND (email_verified_at IS NULL OR email_verified_at > created_at)
                RETURNING (SELECT password_hash IS NOT NULL FROM identity.credentials WHERE account_id = \(accountId))
                """,
                logger: logger
            )
            guard let hadPassword = try await claimed.decode(Bool.self).all().first else { return nil }
            if let keeping {
                try await connection.query(
                    """
                    UPDATE identity.sessions SET credential_version = c.credential_version FROM identity.credentials c
                    WHERE sessions.id = \(keeping) AND sessions.account_id = \(accountId) AND c.account_id = sessions.account_id
                    """,
                    logger: logger
                )
            }
            let sessions = try await connection.query(
                "DELETE FROM identity.sessions WHERE account_id = \(accountId) AND id IS DISTINCT FROM \(keeping) RETURNING 1", logger: logger
            )
            let sessionsEnded = try await sessions.decode(Int.self).all().count
            try await connection.query("DELETE FROM identity.login_challenges WHERE account_id = \(accountId)", logger: logger)
            try await connection.query("DELETE FROM identity.reset_tokens WHERE account_id = \(accountId)", logger: logger)
            try await connection.query("DELETE FROM identity.email_codes WHERE account_id = \(accountId)", logger: logger)
            let factorRows = try await connection.query(
                "DELETE FROM identity.factors WHERE account_id = \(accountId) RETURNING id, kind", logger: logger
            )
            var factors: [(id: String, kind: StoredFactor.Kind)] = []
            for try await (id, kind) in factorRows.decode((String, String).self) {
                if let kind = StoredFactor.Kind(rawValue: kind) { factors.append((id, kind)) }
            }
            // A token kept for an identity is revoked at the provider, as an unlink does.
            let identityRows = try await connection.query(
                """
                WITH removed AS (
                    DELETE FROM identity.external_identities WHERE account_id = \(accountId) RETURNING id, provider, account_id, sealed_refresh_token
                ), revoked AS (
                    INSERT INTO identity.provider_revocations (id, provider, account_id, identity_id, sealed_token, attempts, next_attempt_at)
                    SELECT id, provider, account_id, id, sealed_refresh_token, 0, now() FROM removed WHERE sealed_refresh_token IS NOT NULL
                    ON CONFLICT (id) DO NOTHING
                )
                SELECT id, provider FROM removed
                """,
                logger: logger
            )
            var identities: [(id: String, provider: String)] = []
            for try await (id, provider) in identityRows.decode((String, String).self) { identities.append((id, provider)) }
            let ended = AccessEnded(
                sessions: sessionsEnded, passwordRemoved: hadPassword && !keepingPassword,
                factors: factors.sorted { $0.id < $1.id }, identities: identities.sorted { $0.id < $1.id }
            )
            try await Self.append(events(ended), on: connection, logger: logger)
            return ended
        }
    }
}
