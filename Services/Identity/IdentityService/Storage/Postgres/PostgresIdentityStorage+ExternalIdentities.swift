import Foundation
import KontoModel
import NIOCore
import PostgresNIO

extension PostgresIdentityStorage {
    public func externalIdentity(provider: String, subject: String) async throws(IdentityStorageError) -> (identity: StoredExternalIdentity, credential: StoredCredential)? {
        let found = try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT e.id, e.account_id, e.email, e.email_verified, e.created_at, e.last_used_at, e.sealed_refresh_token
                FROM identity.external_identities e JOIN identity.credentials c ON c.account_id = e.account_id
                WHERE e.provider = \(provider) AND e.subject = \(subject) AND NOT c.pending
                """,
                logger: logger
            )
            return try await rows.decode((String, String, String?, Bool, Date, Date?, ByteBuffer?).self).all().first
        }
        guard let (id, accountId, email, verified, createdAt, lastUsedAt, sealed) = found,
              let credential = try await credential(accountId: accountId)
        else { return nil }
        let identity = StoredExternalIdentity(
            id: id, accountId: accountId, provider: provider, subject: subject, email: email, emailVerified: verified,
            createdAt: Timestamp(createdAt), lastUsedAt: lastUsedAt.map(Timestamp.init), sealedRefreshToken: sealed.map { Array($0.readableBytesView) }
        )
        return (identity, credential)
    }

    public func externalIdentities(accountId: String) async throws(IdentityStorageError) -> [StoredExternalIdentity] {
        try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT id, provider, subject, email, email_verified, created_at, last_used_at, sealed_refresh_token
                FROM identity.external_identities WHERE account_id = \(accountId) ORDER BY created_at, id
                """,
                logger: logger
            )
            var identities: [StoredExternalIdentity] = []
            for try await (id, provider, subject, email, verified, createdAt, lastUsedAt, sealed)
                in rows.decode((String, String, String, String?, Bool, Date, Date?, ByteBuffer?).self) {
                identities.append(StoredExternalIdentity(
                    id: id, accountId: accountId, provider: provider, subject: subject, email: email, emailVerified: verified,
                    createdAt: Timestamp(createdAt), lastUsedAt: lastUsedAt.map(Timestamp.init), sealedRefreshToken: sealed.map { Array($0.readableBytesView) }
                ))
            }
            return identities
        }
    }

    public func addExternalIdentity(_ identity: StoredExternalIdentity, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            // Held against a concurrent deletion until commit (a pending sign-up's row counts: the identity is part of it).
            let account = try await connection.query(
                "SELECT 1 FROM identity.credentials WHERE account_id = \(identity.accountId) FOR SHARE",
                logger: logger
            )
            guard try await account.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
            let inserted = try await connection.query(
                """
                INSERT INTO identity.external_identities (id, account_id, provider, subject, email, email_verified, created_at, last_used_at, sealed_refresh_token)
                VALUES (\(identity.id), \(identity.accountId), \(identity.provider), \(identity.subject), \(identity.email), \(identity.emailVerified),
                        \(identity.createdAt.date), \(identity.lastUsedAt?.date), \(identity.sealedRefreshToken.map { ByteBuffer(bytes: $0) }))
                ON CONFLICT (provider, subject) DO NOTHING
                RETURNING 1
                """,
                logger: logger
            )
            guard try await inserted.decode(Int.self).all().count == 1 else { return false }
            try await Self.append(events, on: connection, logger: logger)
            return true
        }
    }

    public func removeExternalIdentity(accountId: String, identityId: String, keepingWayIn: Bool, events: [AccountEvent]) async throws(IdentityStorageError) -> ExternalIdentityRemoval {
        try await transaction { connection, logger in
            // The account's row locked: two concurrent unlinks of its last two identities are taken one after the other.
            let account = try await connection.query(
                "SELECT password_hash IS NOT NULL FROM identity.credentials WHERE account_id = \(accountId) AND NOT pending FOR UPDATE",
                logger: logger
            )
            guard let hasPassword = try await account.decode(Bool.self).all().first else { return .notFound }
            let rows = try await connection.query(
                """
                SELECT id, provider, subject, email, email_verified, created_at, last_used_at
                FROM identity.external_identities WHERE account_id = \(accountId)
                """,
                logger: logger
            )
            let identities = try await rows.decode((String, String, String, String?, Bool, Date, Date?).self).all()
            guard let (id, provider, subject, email, verified, createdAt, lastUsedAt) = identities.first(where: { $0.0 == identityId }) else { return .notFound }
            if keepingWayIn, !hasPassword, identities.count == 1 { return .lastSignInMethod }
            // A token kept for the identity is revoked at the provider, as at deletion.
            try await connection.query(
                """
                WITH removed AS (DELETE FROM identity.external_identities WHERE id = \(identityId) RETURNING id, provider, account_id, sealed_refresh_token)
                INSERT INTO identity.provider_revocations (id, provider, account_id, identity_id, sealed_token, attempts, next_attempt_at)
                SELECT id, provider, account_id, id, sealed_refresh_token, 0, now() FROM removed WHERE sealed_refresh_token IS NOT NULL
                ON CONFLICT (id) DO NOTHING
                """,
                logger: logger
            )
            try await Self.append(events, on: connection, logger: logger)
            return .removed(StoredExternalIdentity(
                id: id, accountId: accountId, provider: provider, subject: subject, email: email, emailVerified: verified,
                createdAt: Timestamp(createdAt), lastUsedAt: lastUsedAt.map(Timestamp.init)
            ))
        }
    }

    public func touchExternalIdentity(id: String, email: String?, emailVerified: Bool, at now: Timestamp, sealedRefreshToken: [UInt8]?) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query(
                """
                UPDATE identity.external_identities SET last_used_at = \(now.date), email = \(email), email_verified = \(emailVerified),
                    sealed_refresh_token = COALESCE(\(sealedRefreshToken.map { ByteBuffer(bytes: $0) }), sealed_refresh_token)
                WHERE id = \(id)
                """,
                logger: logger
            )
        }
    }

    public func useNonce(digest: [UInt8], expiresAt: Timestamp) async throws(IdentityStorageError) -> Bool {
        try await run { client, logger in
            // The primary key decides between two concurrent uses of one token.
            let rows = try await client.query(
                """
                INSERT INTO identity.used_nonces (digest, expires_at) VALUES (\(ByteBuffer(bytes: digest)), \(expiresAt.date))
                ON CONFLICT (digest) DO NOTHING RETURNING 1
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).all().count == 1
        }
    }

    public func dueRevocations(at now: Timestamp, leaseUntil: Timestamp, limit: Int) async throws(IdentityStorageError) -> [StoredRevocation] {
        try await run { client, logger in
            let rows = try await client.query(
                """
                UPDATE identity.provider_revocations SET next_attempt_at = \(leaseUntil.date)
                WHERE id IN (
                    SELECT id FROM identity.provider_revocations WHERE NOT dead AND next_attempt_at <= \(now.date)
                    ORDER BY next_attempt_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
                )
                RETURNING id, provider, account_id, identity_id, sealed_token, attempts
                """,
                logger: logger
            )
            return try await Self.revocations(rows)
        }
    }

    public func finishRevocation(id: String) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query("DELETE FROM identity.provider_revocations WHERE id = \(id)", logger: logger)
        }
    }

    public func failRevocation(id: String, attempts: Int, retryAt: Timestamp?, at now: Timestamp) async throws(IdentityStorageError) {
        try await run { client, logger in
            // A dead one keeps when it was given up in next_attempt_at, which nothing reads for it otherwise.
            try await client.query(
                """
                UPDATE identity.provider_revocations
                SET attempts = \(attempts), next_attempt_at = \((retryAt ?? now).date), dead = \(retryAt == nil)
                WHERE id = \(id)
                """,
                logger: logger
            )
        }
    }

    public func pruneDeadRevocations(givenUpBefore cutoff: Timestamp) async throws(IdentityStorageError) -> Int {
        try await run { client, logger in
            let rows = try await client.query(
                "DELETE FROM identity.provider_revocations WHERE dead AND next_attempt_at < \(cutoff.date) RETURNING 1", logger: logger
            )
            return try await rows.decode(Int.self).all().count
        }
    }

    public func deadRevocations() async throws(IdentityStorageError) -> [StoredRevocation] {
        try await run { client, logger in
            let rows = try await client.query(
                "SELECT id, provider, account_id, identity_id, sealed_token, attempts FROM identity.provider_revocations WHERE dead ORDER BY id",
                logger: logger
            )
            return try await Self.revocations(rows)
        }
    }

    private static func revocations(_ rows: PostgresRowSequence) async throws -> [StoredRevocation] {
        var revocations: [StoredRevocation] = []
        for try await (id, provider, accountId, identityId, sealed, attempts) in rows.decode((String, String, String, String, ByteBuffer, Int32).self) {
            revocations.append(StoredRevocation(
                id: id, provider: provider, accountId: accountId, identityId: identityId, sealedToken: Array(sealed.readableBytesView), attempts: Int(attempts)
            ))
        }
        return revocations
    }
}
