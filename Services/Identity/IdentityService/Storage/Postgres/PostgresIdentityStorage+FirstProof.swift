import Foundation
import KontoModel
import NIOCore
import PostgresNIO

extension PostgresIdentityStorage {
    /// Identity's tables whose rows of an account the first proof ends (``endAccessBeforeFirstProof``; the
    /// credentials row itself loses its password and mail opt-outs in place). `IdentityStorageFirstProofTests` holds
    /// every table of the schema to this list or ``firstProofKeeps``: a new table is neither until someone decides.
    static let firstProofEnds: Set<String> = [
        "sessions", "login_challenges", "reset_tokens", "email_codes", "factors", "recovery_codes", "external_identities",
        "oidc_consents", "oidc_grants", "oidc_refresh_tokens", "oidc_codes",
    ]

    /// The tables the first proof leaves, each with why: none of them is a way into the account or a choice made in
    /// the account's name.
    static let firstProofKeeps: [String: String] = [
        "credentials": "the account itself: its password and mail opt-outs are reset in place",
        "login_failures": "throttling counts by client and userId digests: no way in, and the owner's own failures count too",
        "second_factor_answers": "a count of wrong second-factor answers (throttling): no way in",
        "known_clients": "digests of clients that signed in, for new-sign-in notices: no way in; a squatter's client signs in no more",
        "email_verifications": "pending proofs of the address: each link goes to the address, whose owner holds it",
        "outbox": "events on their way to Notifications, the proof's own among them",
        "profile_cleanups": "deletions of Profile's details still to run: nothing of a living account",
        "provider_revocations": "the squatter's provider tokens on their way to being revoked (the proof adds them)",
        "used_passkey_challenges": "replay guards: digests of challenges used",
        "used_nonces": "replay guards: digests of providers' nonces used",
        "audit_log": "the append-only record of what happened, the squatter's acts among them",
        "audit_chain": "the audit log's head and anchor: no account's",
        "operator_keys": "operators' keys: no account's",
        "oidc_clients": "the OpenID Provider's clients: no account's",
    ]

    public func recordOwnersProof(accountId: String, at now: Timestamp) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            // The same claim as the first proof's below (one of concurrent proofs is the first), without ending anything
            // and without raising the credential's version: every session stays valid.
            let claimed = try await connection.query(
                """
                UPDATE identity.credentials SET proven_at = \(now.date)
                WHERE account_id = \(accountId) AND NOT pending AND proven_at IS NULL
                  AND (email_verified_at IS NULL OR email_verified_at > created_at)
                RETURNING 1
                """,
                logger: logger
            )
            return try await claimed.decode(Int.self).all().count == 1
        }
    }

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
            // The applications the squatter let in: consents (silent prompt=none sign-ins), grants (their refresh
            // tokens go with them) and unredeemed codes.
            let applicationRows = try await connection.query(
                """
                WITH consents AS (DELETE FROM identity.oidc_consents WHERE account_id = \(accountId) RETURNING client_id),
                     grants AS (DELETE FROM identity.oidc_grants WHERE account_id = \(accountId) RETURNING client_id),
                     codes AS (DELETE FROM identity.oidc_codes WHERE account_id = \(accountId) RETURNING client_id)
                SELECT DISTINCT client_id FROM (SELECT client_id FROM consents UNION ALL SELECT client_id FROM grants
                    UNION ALL SELECT client_id FROM codes) ended
                """,
                logger: logger
            )
            var applications: [String] = []
            for try await clientId in applicationRows.decode(String.self) { applications.append(clientId) }
            // Mail turned off before the proof was not the owner's choice (a squatter silencing new sign-in notices).
            let mail = try await connection.query(
                """
                UPDATE identity.credentials SET mail_opt_outs = '{}' WHERE account_id = \(accountId) AND cardinality(mail_opt_outs) > 0
                RETURNING 1
                """,
                logger: logger
            )
            let mailRestored = try await mail.decode(Int.self).all().count == 1
            let ended = AccessEnded(
                sessions: sessionsEnded, passwordRemoved: hadPassword && !keepingPassword,
                factors: factors.sorted { $0.id < $1.id }, identities: identities.sorted { $0.id < $1.id },
                applications: applications.sorted(), mailPreferencesRestored: mailRestored
            )
            try await Self.append(events(ended), on: connection, logger: logger)
            return ended
        }
    }
}
