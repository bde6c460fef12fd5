import Foundation
import KontoContracts
import KontoEvents
import KontoModel
import Logging
import NIOCore
import PostgresNIO

extension PostgresIdentityStorage {
    // MARK: Authorization codes

    public func createAuthorizationCode(_ code: StoredAuthorizationCode) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            // The session held against its end and the account against a credential change until commit.
            let session = try await connection.query(
                "SELECT 1 FROM identity.sessions WHERE id = \(code.sessionId) AND account_id = \(code.accountId) FOR SHARE", logger: logger
            )
            guard try await session.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
            guard try await Self.grantable(code.accountId, credentialVersion: code.credentialVersion, on: connection, logger: logger) else {
                throw IdentityStorageError(.notFound)
            }
            try await connection.query(
                """
                INSERT INTO identity.oidc_codes (code_hash, account_id, session_id, client_id, redirect_uri, code_challenge, scopes, nonce,
                                                 auth_time, assurance_level, sign_in_method, credential_version, issued_at, expires_at, keep_until)
                VALUES (\(ByteBuffer(bytes: code.codeHash)), \(code.accountId), \(code.sessionId), \(code.clientId), \(code.redirectURI),
                        \(code.codeChallenge), \(code.scopes), \(code.nonce), \(code.authTime.date), \(Int16(code.assuranceLevel)),
                        \(code.signInMethod), \(code.credentialVersion), \(code.issuedAt.date), \(code.expiresAt.date), \(code.keepUntil.date))
                """,
                logger: logger
            )
        }
    }

    public func redeemAuthorizationCode(
        codeHash: [UInt8], at now: Timestamp, exchange: @escaping @Sendable (StoredAuthorizationCode) -> NewOpenIDGrant?
    ) async throws(IdentityStorageError) -> AuthorizationCodeRedemption {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                """
                SELECT account_id, session_id, client_id, redirect_uri, code_challenge, scopes, nonce, auth_time, assurance_level,
                       sign_in_method, credential_version, issued_at, expires_at, keep_until, used_at IS NOT NULL, grant_id
                FROM identity.oidc_codes WHERE code_hash = \(ByteBuffer(bytes: codeHash)) FOR UPDATE
                """,
                logger: logger
            )
            guard let row = try await rows.collect().first else { return .unknown }
            let (accountId, sessionId, clientId, redirectURI, challenge, scopes, nonce, authTime, level, method, version, issuedAt, expiresAt, keepUntil, used, grantId) =
                try row.decode((String, String?, String, String, String, [String], String?, Date, Int16, String?, Int64, Date, Date, Date, Bool, String?).self)
            if used {
                // A second use: the code was stolen or replayed, so what the first use got is no longer trusted.
                var revoked = false
                if let grantId {
                    let deleted = try await connection.query("DELETE FROM identity.oidc_grants WHERE id = \(grantId) RETURNING 1", logger: logger)
                    revoked = try await deleted.decode(Int.self).all().count == 1
                }
                return .reused(accountId: accountId, clientId: clientId, revokedGrant: revoked)
            }
            guard let sessionId, now < Timestamp(expiresAt) else { return .unknown }
            guard try await Self.grantable(accountId, credentialVersion: version, on: connection, logger: logger) else { return .unknown }
            let code = StoredAuthorizationCode(
                codeHash: codeHash, accountId: accountId, sessionId: sessionId, clientId: clientId, redirectURI: redirectURI, codeChallenge: challenge,
                scopes: scopes, nonce: nonce, authTime: Timestamp(authTime), assuranceLevel: Int(level), signInMethod: method, credentialVersion: version,
                issuedAt: Timestamp(issuedAt), expiresAt: Timestamp(expiresAt), keepUntil: Timestamp(keepUntil)
            )
            guard let new = exchange(code) else {
                try await connection.query("UPDATE identity.oidc_codes SET used_at = \(now.date) WHERE code_hash = \(ByteBuffer(bytes: codeHash))", logger: logger)
                return .refused(code)
            }
            // The grant, its refresh token and the code used up, in one statement: round trips dominate an exchange (the
            // signing is under 1 % of its time), and 8 a redemption became 5 (konto-bench oidc, medians of 3: 804 → 1,081
            // exchanges/s). The refresh token's and the code's references to the new grant are checked at the
            // statement's end, when it is there.
            let grant = new.grant
            let refreshTokenHash = new.refreshToken.map { ByteBuffer(bytes: $0.tokenHash) }
            try await connection.query(
                """
                WITH granted AS (
                    INSERT INTO identity.oidc_grants (id, account_id, client_id, session_id, scopes, auth_time, assurance_level, sign_in_method,
                                                      credential_version, created_at, idle_expires_at, absolute_expires_at, last_refreshed_at)
                    VALUES (\(grant.id), \(grant.accountId), \(grant.clientId), \(grant.sessionId), \(grant.scopes), \(grant.authTime.date),
                            \(Int16(grant.assuranceLevel)), \(grant.signInMethod), \(grant.credentialVersion), \(grant.createdAt.date),
                            \(grant.idleExpiresAt.date), \(grant.absoluteExpiresAt.date), \(grant.lastRefreshedAt?.date))
                    RETURNING id
                ), refresh AS (
                    INSERT INTO identity.oidc_refresh_tokens (token_hash, grant_id, expires_at)
                    SELECT \(refreshTokenHash), id, \(new.refreshToken?.expiresAt.date) FROM granted WHERE \(refreshTokenHash)::bytea IS NOT NULL
                )
                UPDATE identity.oidc_codes SET used_at = \(now.date), grant_id = (SELECT id FROM granted) WHERE code_hash = \(ByteBuffer(bytes: codeHash))
                """,
                logger: logger
            )
            return .redeemed(code, new.grant)
        }
    }

    // MARK: Grants and refresh tokens

    public func openIDGrant(id: String, at now: Timestamp) async throws(IdentityStorageError) -> StoredOpenIDGrant? {
        try await run { client, logger in
            let rows = try await client.query(
                "\(unescaped: Self.grantColumns) WHERE g.id = \(id) AND \(unescaped: Self.liveGrant) AND g.idle_expires_at > \(now.date) AND g.absolute_expires_at > \(now.date)",
                logger: logger
            )
            return try await Self.decodeGrants(rows).first
        }
    }

    public func rotateRefreshToken(
        tokenHash: [UInt8], at now: Timestamp, replacement: StoredRefreshToken, check: @escaping @Sendable (StoredOpenIDGrant) -> Bool
    ) async throws(IdentityStorageError) -> RefreshTokenRotation {
        try await transaction { connection, logger in
            let hash = ByteBuffer(bytes: tokenHash)
            // The grant's row first, then the token's, in every path (a deletion locks the grant and then cascades to its
            // tokens): two exchanges of one family are taken one after the other and never deadlock. The grant is found
            // through the token unlocked, as the token's grant never changes.
            let grants = try await connection.query(
                """
                \(unescaped: Self.grantColumns) WHERE g.id = (SELECT grant_id FROM identity.oidc_refresh_tokens WHERE token_hash = \(hash)) FOR UPDATE OF g
                """,
                logger: logger
            )
            guard let grant = try await Self.decodeGrants(grants).first else { return .unknown }
            let grantId = grant.id
            let tokens = try await connection.query(
                "SELECT expires_at, used_at IS NOT NULL FROM identity.oidc_refresh_tokens WHERE token_hash = \(hash) FOR UPDATE", logger: logger
            )
            guard let (expiresAt, used) = try await tokens.decode((Date, Bool).self).all().first else { return .unknown }
            if used {
                try await connection.query("DELETE FROM identity.oidc_grants WHERE id = \(grantId)", logger: logger)
                return .reused(grant)
            }
            guard now < Timestamp(expiresAt), grant.isLive(at: now),
                  try await Self.grantable(grant.accountId, credentialVersion: grant.credentialVersion, on: connection, logger: logger)
            else { return .unknown }
            guard check(grant) else { return .refused }
            try await connection.query("UPDATE identity.oidc_refresh_tokens SET used_at = \(now.date) WHERE token_hash = \(hash)", logger: logger)
            // The replacement and the grant's new idle expiry in one statement (a round trip fewer; see redeemAuthorizationCode).
            try await connection.query(
                """
                WITH replacement AS (
                    INSERT INTO identity.oidc_refresh_tokens (token_hash, grant_id, expires_at)
                    VALUES (\(ByteBuffer(bytes: replacement.tokenHash)), \(grantId), \(replacement.expiresAt.date))
                )
                UPDATE identity.oidc_grants SET idle_expires_at = \(replacement.expiresAt.date), last_refreshed_at = \(now.date) WHERE id = \(grantId)
                """,
                logger: logger
            )
            var rotated = grant
            rotated.idleExpiresAt = replacement.expiresAt
            rotated.lastRefreshedAt = now
            return .rotated(rotated)
        }
    }

    public func openIDGrant(refreshTokenHash: [UInt8], clientId: String) async throws(IdentityStorageError) -> StoredOpenIDGrant? {
        try await run { client, logger in
            let rows = try await client.query(
                """
                \(unescaped: Self.grantColumns) JOIN identity.oidc_refresh_tokens t ON t.grant_id = g.id
                WHERE t.token_hash = \(ByteBuffer(bytes: refreshTokenHash)) AND g.client_id = \(clientId)
                """,
                logger: logger
            )
            return try await Self.decodeGrants(rows).first
        }
    }

    public func openIDGrant(currentRefreshTokenHash: [UInt8], at now: Timestamp) async throws(IdentityStorageError) -> StoredOpenIDGrant? {
        try await run { client, logger in
            let rows = try await client.query(
                """
                \(unescaped: Self.grantColumns) JOIN identity.oidc_refresh_tokens t ON t.grant_id = g.id
                WHERE t.token_hash = \(ByteBuffer(bytes: currentRefreshTokenHash)) AND t.used_at IS NULL AND t.expires_at > \(now.date)
                    AND \(unescaped: Self.liveGrant) AND g.idle_expires_at > \(now.date) AND g.absolute_expires_at > \(now.date)
                """,
                logger: logger
            )
            return try await Self.decodeGrants(rows).first
        }
    }

    public func revokeOpenIDGrant(id: String, clientId: String, audit: [AuditRecord]) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                "DELETE FROM identity.oidc_grants WHERE id = \(id) AND client_id = \(clientId) RETURNING 1", logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { return false }
            try await Self.appendAudit(audit, on: connection, logger: logger)
            return true
        }
    }

    public func openIDGrants(accountId: String, at now: Timestamp) async throws(IdentityStorageError) -> [StoredOpenIDGrant] {
        try await run { client, logger in
            let rows = try await client.query(
                """
                \(unescaped: Self.grantColumns) WHERE g.account_id = \(accountId) AND \(unescaped: Self.liveGrant)
                    AND g.idle_expires_at > \(now.date) AND g.absolute_expires_at > \(now.date)
                ORDER BY g.created_at, g.id
                """,
                logger: logger
            )
            return try await Self.decodeGrants(rows)
        }
    }

    public func endSessionAndGrants(
        sessionId: String, accountId: String, events: [AccountEvent], audit: @escaping @Sendable (Int) -> [AuditRecord]
    ) async throws(IdentityStorageError) -> Int? {
        try await transaction { connection, logger in
            // The session's row locked first: a code exchange through it waits, then finds it gone.
            let session = try await connection.query(
                "SELECT 1 FROM identity.sessions WHERE id = \(sessionId) AND account_id = \(accountId) FOR UPDATE", logger: logger
            )
            guard try await session.decode(Int.self).all().count == 1 else { return nil }
            let grants = try await connection.query(
                "DELETE FROM identity.oidc_grants WHERE session_id = \(sessionId) AND account_id = \(accountId) RETURNING 1", logger: logger
            )
            let ended = try await grants.decode(Int.self).all().count
            try await connection.query("DELETE FROM identity.sessions WHERE id = \(sessionId)", logger: logger)
            try await Self.append(events, on: connection, logger: logger)
            try await Self.appendAudit(audit(ended), on: connection, logger: logger)
            return ended
        }
    }

    // MARK: Consents

    public func openIDConsent(accountId: String, clientId: String) async throws(IdentityStorageError) -> StoredOpenIDConsent? {
        try await run { client, logger in
            let rows = try await client.query(
                "SELECT scopes, granted_at FROM identity.oidc_consents WHERE account_id = \(accountId) AND client_id = \(clientId)", logger: logger
            )
            return try await rows.decode(([String], Date).self).all().first.map {
                StoredOpenIDConsent(accountId: accountId, clientId: clientId, scopes: $0.0, grantedAt: Timestamp($0.1))
            }
        }
    }

    public func saveOpenIDConsent(_ consent: StoredOpenIDConsent, audit: [AuditRecord]) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            try await Self.lockAccount(consent.accountId, on: connection, logger: logger)
            try await connection.query(
                """
                INSERT INTO identity.oidc_consents (account_id, client_id, scopes, granted_at)
                VALUES (\(consent.accountId), \(consent.clientId), \(consent.scopes), \(consent.grantedAt.date))
                ON CONFLICT (account_id, client_id) DO UPDATE SET scopes = EXCLUDED.scopes, granted_at = EXCLUDED.granted_at
                """,
                logger: logger
            )
            try await Self.appendAudit(audit, on: connection, logger: logger)
        }
    }

    public func openIDConsents(accountId: String) async throws(IdentityStorageError) -> [StoredOpenIDConsent] {
        try await run { client, logger in
            let rows = try await client.query(
                "SELECT client_id, scopes, granted_at FROM identity.oidc_consents WHERE account_id = \(accountId) ORDER BY granted_at, client_id",
                logger: logger
            )
            return try await rows.decode((String, [String], Date).self).all().map {
                StoredOpenIDConsent(accountId: accountId, clientId: $0.0, scopes: $0.1, grantedAt: Timestamp($0.2))
            }
        }
    }

    public func revokeOpenIDClient(accountId: String, clientId: String, audit: [AuditRecord]) async throws(IdentityStorageError) -> Int? {
        try await transaction { connection, logger in
            let consents = try await connection.query(
                "DELETE FROM identity.oidc_consents WHERE account_id = \(accountId) AND client_id = \(clientId) RETURNING 1", logger: logger
            )
            let hadConsent = try await consents.decode(Int.self).all().count == 1
            let grants = try await connection.query(
                "DELETE FROM identity.oidc_grants WHERE account_id = \(accountId) AND client_id = \(clientId) RETURNING 1", logger: logger
            )
            let ended = try await grants.decode(Int.self).all().count
            guard hadConsent || ended > 0 else { return nil }
            try await Self.appendAudit(audit, on: connection, logger: logger)
            return ended
        }
    }

    // MARK: Clients registered through the admin API

    /// The columns ``client(_:)`` reads, in its order.
    private static let clientColumns = "id, settings::text, secret_digest, secret_created_at, previous_secret_digest, previous_secret_expires_at, created_at, updated_at"
    private typealias ClientRow = (String, String, ByteBuffer?, Date?, ByteBuffer?, Date?, Date, Date)

    private static func client(_ row: ClientRow) throws -> StoredOpenIDClient {
        let settings = try JSONDecoder().decode(IdentityOpenIDClientSettings.self, from: Data(row.1.utf8))
        return StoredOpenIDClient(
            id: row.0, settings: settings, secretDigest: row.2.map { Array($0.readableBytesView) }, secretCreatedAt: row.3.map(Timestamp.init),
            previousSecretDigest: row.4.map { Array($0.readableBytesView) }, previousSecretExpiresAt: row.5.map(Timestamp.init),
            createdAt: Timestamp(row.6), updatedAt: Timestamp(row.7)
        )
    }

    private static func settingsText(_ settings: IdentityOpenIDClientSettings) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(settings), as: UTF8.self)
    }

    public func openIDClients() async throws(IdentityStorageError) -> [StoredOpenIDClient] {
        try await run { client, logger in
            let rows = try await client.query("SELECT \(unescaped: Self.clientColumns) FROM identity.oidc_clients ORDER BY created_at, id", logger: logger)
            return try await rows.decode(ClientRow.self).all().map(Self.client)
        }
    }

    public func openIDClient(id: String) async throws(IdentityStorageError) -> StoredOpenIDClient? {
        try await run { client, logger in
            let rows = try await client.query("SELECT \(unescaped: Self.clientColumns) FROM identity.oidc_clients WHERE id = \(id)", logger: logger)
            return try await rows.decode(ClientRow.self).all().first.map(Self.client)
        }
    }

    public func createOpenIDClient(_ stored: StoredOpenIDClient, limit: Int) async throws(IdentityStorageError) -> OpenIDClientCreation {
        try await transaction { connection, logger in
            // Registrations from every replica queue here (the mode conflicts with itself and with inserts and
            // deletes), so the count is still true at the insert.
            try await connection.query("LOCK TABLE identity.oidc_clients IN SHARE ROW EXCLUSIVE MODE", logger: logger)
            let taken = try await connection.query(
                "SELECT count(*), count(*) FILTER (WHERE id = \(stored.id)) FROM identity.oidc_clients", logger: logger
            )
            guard let (count, named) = try await taken.decode((Int, Int).self).all().first else { return .limitReached }
            guard named == 0 else { return .idTaken }
            guard count < limit else { return .limitReached }
            try await connection.query(
                """
                INSERT INTO identity.oidc_clients (id, settings, secret_digest, secret_created_at, created_at, updated_at)
                VALUES (\(stored.id), CAST(\(try Self.settingsText(stored.settings)) AS jsonb), \(stored.secretDigest.map { ByteBuffer(bytes: $0) }),
                        \(stored.secretCreatedAt?.date), \(stored.createdAt.date), \(stored.updatedAt.date))
                """,
                logger: logger
            )
            return .created
        }
    }

    public func updateOpenIDClient(
        id: String, settings: IdentityOpenIDClientSettings, mayChangeFirstParty: Bool, at now: Timestamp
    ) async throws(IdentityStorageError) -> OpenIDClientUpdate {
        try await transaction { connection, logger in
            // The row locked: the settings compared are the ones replaced, whatever another replica changes meanwhile.
            let current = try await connection.query(
                "SELECT \(unescaped: Self.clientColumns) FROM identity.oidc_clients WHERE id = \(id) FOR UPDATE", logger: logger
            )
            guard let previous = try await current.decode(ClientRow.self).all().first.map(Self.client) else { return .notFound }
            if previous.settings.firstParty || settings.firstParty, !mayChangeFirstParty { return .firstPartyRefused }
            let rows = try await connection.query(
                """
                UPDATE identity.oidc_clients SET settings = CAST(\(try Self.settingsText(settings)) AS jsonb), updated_at = \(now.date)
                WHERE id = \(id) RETURNING \(unescaped: Self.clientColumns)
                """,
                logger: logger
            )
            guard let updated = try await rows.decode(ClientRow.self).all().first.map(Self.client) else { return .notFound }
            let changed = settings.consentChanges(from: previous.settings)
            var ended = 0
            if !changed.isEmpty {
                let consents = try await connection.query("DELETE FROM identity.oidc_consents WHERE client_id = \(id) RETURNING 1", logger: logger)
                ended = try await consents.decode(Int.self).all().count
            }
            return .updated(updated, changed: changed, consentsEnded: ended)
        }
    }

    public func rotateOpenIDClientSecret(
        id: String, digest: [UInt8], previousExpiresAt: Timestamp?, mayChangeFirstParty: Bool, at now: Timestamp
    ) async throws(IdentityStorageError) -> StoredOpenIDClient? {
        try await run { client, logger in
            // One statement: two rotations at once each make the other's secret the previous one, never lose both.
            let rows = try await client.query(
                """
                UPDATE identity.oidc_clients
                SET previous_secret_digest = CASE WHEN \(previousExpiresAt?.date)::timestamptz IS NULL THEN NULL ELSE secret_digest END,
                    previous_secret_expires_at = \(previousExpiresAt?.date),
                    secret_digest = \(ByteBuffer(bytes: digest)), secret_created_at = \(now.date), updated_at = \(now.date)
                WHERE id = \(id) AND secret_digest IS NOT NULL AND (\(mayChangeFirstParty) OR NOT COALESCE((settings->>'firstParty')::boolean, false))
                RETURNING \(unescaped: Self.clientColumns)
                """,
                logger: logger
            )
            return try await rows.decode(ClientRow.self).all().first.map(Self.client)
        }
    }

    public func removeOpenIDClient(id: String) async throws(IdentityStorageError) -> IdentityOpenIDClientRemoved? {
        try await transaction { connection, logger -> IdentityOpenIDClientRemoved? in
            let removed = try await connection.query("DELETE FROM identity.oidc_clients WHERE id = \(id) RETURNING 1", logger: logger)
            guard try await removed.decode(Int.self).all().count == 1 else { return nil }
            try await connection.query("DELETE FROM identity.oidc_codes WHERE client_id = \(id)", logger: logger)
            let grants = try await connection.query("WITH ended AS (DELETE FROM identity.oidc_grants WHERE client_id = \(id) RETURNING 1) SELECT count(*) FROM ended", logger: logger)
            let consents = try await connection.query("WITH ended AS (DELETE FROM identity.oidc_consents WHERE client_id = \(id) RETURNING 1) SELECT count(*) FROM ended", logger: logger)
            return IdentityOpenIDClientRemoved(
                grantsEnded: try await grants.decode(Int.self).all().first ?? 0, consentsRemoved: try await consents.decode(Int.self).all().first ?? 0
            )
        }
    }

    // MARK: Retention

    /// Forgets codes past their keeping, refresh tokens past their expiry, and grants that ended: expired, or their
    /// account's credential changed or disabled since (up to `limit` of each).
    static func pruneOpenID(at now: Timestamp, limit: Int, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            DELETE FROM identity.oidc_codes WHERE code_hash IN (
                SELECT code_hash FROM identity.oidc_codes WHERE keep_until <= \(now.date) LIMIT \(limit)
            )
            """,
            logger: logger
        )
        try await connection.query(
            """
            DELETE FROM identity.oidc_grants WHERE id IN (
                SELECT g.id FROM identity.oidc_grants g JOIN identity.credentials c ON c.account_id = g.account_id
                WHERE g.idle_expires_at <= \(now.date) OR g.absolute_expires_at <= \(now.date)
                    OR c.credential_version <> g.credential_version OR c.disabled_at IS NOT NULL
                LIMIT \(limit)
            )
            """,
            logger: logger
        )
        try await connection.query(
            """
            DELETE FROM identity.oidc_refresh_tokens WHERE token_hash IN (
                SELECT token_hash FROM identity.oidc_refresh_tokens WHERE expires_at <= \(now.date) LIMIT \(limit)
            )
            """,
            logger: logger
        )
    }

    // MARK: Helpers

    /// A grant's columns, the grant as `g` (a query adds its conditions).
    static let grantColumns = """
        SELECT g.id, g.account_id, g.client_id, g.session_id, g.scopes, g.auth_time, g.assurance_level, g.sign_in_method, g.credential_version,
               g.created_at, g.idle_expires_at, g.absolute_expires_at, g.last_refreshed_at
        FROM identity.oidc_grants g
        """

    /// The grant's account unchanged since it was made (`g` joined to its credential).
    static let liveGrant = """
        EXISTS (SELECT 1 FROM identity.credentials c WHERE c.account_id = g.account_id AND NOT c.pending AND c.disabled_at IS NULL
                AND c.credential_version = g.credential_version)
        """

    static func decodeGrants(_ rows: PostgresRowSequence) async throws -> [StoredOpenIDGrant] {
        var grants: [StoredOpenIDGrant] = []
        for try await row in rows {
            let (id, accountId, clientId, sessionId, scopes, authTime, level, method, version, createdAt, idle, absolute, refreshed) = try row.decode(
                (String, String, String, String?, [String], Date, Int16, String?, Int64, Date, Date, Date, Date?).self
            )
            grants.append(StoredOpenIDGrant(
                id: id, accountId: accountId, clientId: clientId, sessionId: sessionId, scopes: scopes, authTime: Timestamp(authTime),
                assuranceLevel: Int(level), signInMethod: method, credentialVersion: version, createdAt: Timestamp(createdAt),
                idleExpiresAt: Timestamp(idle), absoluteExpiresAt: Timestamp(absolute), lastRefreshedAt: refreshed.map(Timestamp.init)
            ))
        }
        return grants
    }

    /// Whether the account is active, enabled and at `credentialVersion`, its row held FOR SHARE until commit (a
    /// credential change or deletion waits for this transaction).
    static func grantable(_ accountId: String, credentialVersion: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            """
            SELECT 1 FROM identity.credentials
            WHERE account_id = \(accountId) AND NOT pending AND disabled_at IS NULL AND credential_version = \(credentialVersion)
            FOR SHARE
            """,
            logger: logger
        )
        return try await rows.decode(Int.self).all().count == 1
    }
}
