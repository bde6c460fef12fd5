import Foundation
import KontoEvents
import KontoModel
import KontoPostgres
import Logging
import NIOCore
import PostgresNIO

/// Keeps Identity's records in the `identity` schema: credentials, sessions (token hashes only), failed-login
/// counts shared by every replica, reset tokens (hashes only), pending Profile clean-ups and the event outbox.
///
/// The client is the caller's and must be running for as long as the storage is used. Every query binds its values;
/// the only SQL built from strings is this file's own. Each method is one statement or one transaction, and every
/// change writes its events to the outbox in that same transaction.
public struct PostgresIdentityStorage: IdentityStorage {
    /// Internal for the tamper tests, which write behind the storage's back.
    let client: PostgresClient
    private let logger: Logger
    private let operationTimeout: Duration

    /// Every statement and transaction is bounded by `operationTimeout` (past it: `unavailable`): one waiting on the
    /// pool across a PostgreSQL restart was seen never to return (found by the end-to-end fault tests).
    public init(client: PostgresClient, logger: Logger, operationTimeout: Duration = .seconds(5)) {
        self.client = client
        self.logger = logger
        self.operationTimeout = operationTimeout
    }

    /// Creates or updates the schema; run once at start, before serving. Safe with several replicas starting at once.
    public func migrate(logger: Logger? = nil) async throws {
        let migrator = try PostgresMigrator(namespace: IdentityMigrations.namespace, migrations: IdentityMigrations.all)
        try await migrator.migrate(client: client, logger: logger ?? self.logger)
    }

    // MARK: Accounts

    public func reserveAccount(_ credential: StoredCredential) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query(
                """
                INSERT INTO identity.credentials (account_id, user_id, normalized_user_id, password_hash, pending, created_at, email_verified_at)
                VALUES (\(credential.accountId), \(credential.userId), \(credential.normalizedUserId), \(credential.passwordHash), true, \(credential.createdAt.date),
                        \(credential.emailVerifiedAt?.date))
                """,
                logger: logger
            )
        }
    }

    public func activateAccount(accountId: String, session: StoredSession?, events: [AccountEvent]) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                "UPDATE identity.credentials SET pending = false WHERE account_id = \(accountId) AND pending RETURNING 1",
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
            if let session {
                try await Self.insert(session, on: connection, logger: logger)
            }
            try await Self.append(events, on: connection, logger: logger)
        }
    }

    public func abandonAccount(accountId: String, profileCleanupAt: Timestamp?) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                "DELETE FROM identity.credentials WHERE account_id = \(accountId) AND pending RETURNING 1",
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { return }
            if let profileCleanupAt {
                try await Self.scheduleCleanup(accountId: accountId, at: profileCleanupAt, on: connection, logger: logger)
            }
        }
    }

    public func createAnonymousAccount(_ credential: StoredCredential, session: StoredSession, events: [AccountEvent]) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            try await connection.query(
                "INSERT INTO identity.credentials (account_id, pending, created_at) VALUES (\(credential.accountId), false, \(credential.createdAt.date))",
                logger: logger
            )
            try await Self.insert(session, on: connection, logger: logger)
            try await Self.append(events, on: connection, logger: logger)
        }
    }

    public func credential(accountId: String) async throws(IdentityStorageError) -> StoredCredential? {
        try await credential(where: "account_id", equals: accountId)
    }

    public func credential(normalizedUserId: String) async throws(IdentityStorageError) -> StoredCredential? {
        try await credential(where: "normalized_user_id", equals: normalizedUserId)
    }

    /// `column` is one of this file's two literals, never input.
    private func credential(where column: StaticString, equals value: String) async throws(IdentityStorageError) -> StoredCredential? {
        try await run { client, logger in
            var query = PostgresQuery(unsafeSQL: """
                SELECT \(CredentialColumns.sql), c.password_hash
                FROM identity.credentials AS c WHERE c.\(column) = $1 AND NOT c.pending
                """)
            query.binds.append(value)
            let rows = try await client.query(query, logger: logger)
            for try await row in rows {
                let cells = row.makeRandomAccess()
                return try CredentialColumns.decode(cells, from: 0, passwordHash: try cells[CredentialColumns.count].decode(String?.self))
            }
            return nil
        }
    }

    public func upgradeAnonymous(
        accountId: String,
        userId: String,
        normalizedUserId: String,
        passwordHash: String?,
        session: StoredSession,
        events: [AccountEvent]
    ) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE identity.credentials SET user_id = \(userId), normalized_user_id = \(normalizedUserId), password_hash = \(passwordHash),
                    credential_version = credential_version + 1
                WHERE account_id = \(accountId) AND NOT pending AND normalized_user_id IS NULL
                    AND credential_version = \(session.credentialVersion - 1)
                RETURNING 1
                """,
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
            _ = try await Self.endCredential(accountId: accountId, keeping: nil, on: connection, logger: logger)
            try await Self.insert(session, on: connection, logger: logger)
            try await Self.append(events, on: connection, logger: logger)
        }
    }

    public func changePassword(
        accountId: String,
        passwordHash: String,
        keeping: String?,
        events: @escaping @Sendable (Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> Int {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE identity.credentials SET password_hash = \(passwordHash), credential_version = credential_version + 1
                WHERE account_id = \(accountId) AND NOT pending RETURNING 1
                """,
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
            let ended = try await Self.endCredential(accountId: accountId, keeping: keeping, on: connection, logger: logger)
            try await Self.append(events(ended), on: connection, logger: logger)
            return ended
        }
    }

    public func rehashPassword(accountId: String, passwordHash: String, credentialVersion: Int64) async throws(IdentityStorageError) -> Bool {
        try await run { client, logger in
            let rows = try await client.query(
                """
                UPDATE identity.credentials SET password_hash = \(passwordHash)
                WHERE account_id = \(accountId) AND NOT pending AND credential_version = \(credentialVersion) RETURNING 1
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).all().count == 1
        }
    }

    public func changeUserId(
        accountId: String,
        userId: String,
        normalizedUserId: String,
        keeping: String?,
        events: @escaping @Sendable (Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> Int {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE identity.credentials SET user_id = \(userId), normalized_user_id = \(normalizedUserId),
                    credential_version = credential_version + 1, email_verified_at = NULL, proven_at = COALESCE(proven_at, email_verified_at)
                WHERE account_id = \(accountId) AND NOT pending RETURNING 1
                """,
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
            // A new address is unverified; links sent to the previous one verify nothing.
            try await connection.query("DELETE FROM identity.email_verifications WHERE account_id = \(accountId)", logger: logger)
            let ended = try await Self.endCredential(accountId: accountId, keeping: keeping, on: connection, logger: logger)
            try await Self.append(events(ended), on: connection, logger: logger)
            return ended
        }
    }

    public func deleteAccount(accountId: String, events: [AccountEvent], profileCleanupAt: Timestamp) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            // Locks the row first, so the events are written only for an account that is really deleted.
            let rows = try await connection.query(
                "SELECT 1 FROM identity.credentials WHERE account_id = \(accountId) AND NOT pending FOR UPDATE",
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { return false }
            try await Self.append(events, on: connection, logger: logger)
            try await Self.eraseAudit(accountIds: [accountId], on: connection, logger: logger)
            // The provider tokens kept for revocation outlive the account until they are revoked.
            try await connection.query(
                """
                INSERT INTO identity.provider_revocations (id, provider, account_id, identity_id, sealed_token, attempts, next_attempt_at)
                SELECT id, provider, account_id, id, sealed_refresh_token, 0, now()
                FROM identity.external_identities WHERE account_id = \(accountId) AND sealed_refresh_token IS NOT NULL
                ON CONFLICT (id) DO NOTHING
                """,
                logger: logger
            )
            // Sessions, reset tokens and linked identities go with the row (ON DELETE CASCADE).
            try await connection.query("DELETE FROM identity.credentials WHERE account_id = \(accountId)", logger: logger)
            try await Self.scheduleCleanup(accountId: accountId, at: profileCleanupAt, on: connection, logger: logger)
            return true
        }
    }

    // MARK: Sessions

    public func createSession(_ session: StoredSession, events: [AccountEvent]) async throws(IdentityStorageError) {
        // One statement (atomic on its own, one round trip instead of five): the session and its events are
        // written only when the account row exists and is not pending, and that row is locked against a
        // concurrent delete until the statement ends.
        let created = try await run { client, logger in
            let outbox = try AccountEventColumns(events)
            let audit = AuditColumns(AuditRecord.records(for: events))
            let rows = try await client.query(
                """
                WITH account AS (
                    SELECT account_id FROM identity.credentials
                    WHERE account_id = \(session.accountId) AND NOT pending AND credential_version = \(session.credentialVersion)
                    FOR SHARE
                ), created AS (
                    \(sessionInsert: session, from: "account")
                ), events AS (
                    \(outboxInsert: outbox, schema: "identity", after: "created")
                ), audit AS (
                    \(auditInsert: audit, after: "created")
                )
                SELECT count(*) FROM created
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).all().first ?? 0
        }
        guard created == 1 else { throw IdentityStorageError(.notFound) }
    }

    public func replaceSession(id: String, with replacement: StoredSession) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            // The account's row first, FOR SHARE as a login's insert: a concurrent credential change either waits
            // for this transaction (and then ends the replacement with the rest) or comes first (and this finds the
            // version changed).
            try await Self.lockAccount(replacement.accountId, credentialVersion: replacement.credentialVersion, on: connection, logger: logger)
            let rows = try await connection.query(
                """
                DELETE FROM identity.sessions WHERE id = \(id) AND account_id = \(replacement.accountId)
                    AND credential_version = \(replacement.credentialVersion)
                RETURNING sign_in_method, client_address, client_name
                """,
                logger: logger
            )
            let replaced = try await rows.decode((String?, String?, String?).self).all()
            guard replaced.count == 1 else { throw IdentityStorageError(.notFound) }
            // The session a lookup found does not carry its client (validation has no use for it): kept from the row.
            var replacement = replacement
            replacement.signInMethod = replacement.signInMethod ?? replaced[0].0
            replacement.clientAddress = replacement.clientAddress ?? replaced[0].1
            replacement.clientName = replacement.clientName ?? replaced[0].2
            try await Self.insert(replacement, on: connection, logger: logger)
        }
    }

    public func session(tokenHash: [UInt8]) async throws(IdentityStorageError) -> StoredSession? {
        try await run { client, logger in
            let statement = SessionLookupStatement(tokenHash: ByteBuffer(bytes: tokenHash))
            var found: [SessionLookupStatement.Row] = []
            do {
                for try await row in try await client.execute(statement, logger: logger) { found.append(row) }
            } catch let error as PSQLError where error.code == .server {
                // postgres-nio remembers a failed preparation per connection for the connection's life and answers
                // every later execution on it with that error, without asking the server: after a passing outage of
                // the schema (a migration, a restore), the lookup would fail on that connection for good. The same SQL
                // unprepared answers for the server as it is now (IdentityContractProviderTests replays exactly this:
                // validation with the tables gone, then with them back).
                let rows = try await client.query(PostgresQuery(unsafeSQL: SessionLookupStatement.sql, binds: try statement.makeBindings()), logger: logger)
                found = []
                for try await row in rows { found.append(try statement.decodeRow(row)) }
            }
            for var session in found {
                session.tokenHash = tokenHash
                return session
            }
            return nil
        }
    }

    public func mailOptOuts(accountId: String) async throws(IdentityStorageError) -> Set<String>? {
        try await run { client, logger in
            let rows = try await client.query(
                "SELECT mail_opt_outs FROM identity.credentials WHERE account_id = \(accountId) AND NOT pending", logger: logger
            )
            for try await optOuts in rows.decode([String].self) { return Set(optOuts) }
            return nil
        }
    }

    public func setMailOptOuts(accountId: String, _ optOuts: Set<String>, audit: [AuditRecord]) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE identity.credentials SET mail_opt_outs = \(optOuts.sorted())
                WHERE account_id = \(accountId) AND NOT pending RETURNING 1
                """,
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { return false }
            try await Self.appendAudit(audit, on: connection, logger: logger)
            return true
        }
    }

    public func touchSession(id: String, idleExpiresAt: Timestamp, at now: Timestamp) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query(
                """
                UPDATE identity.sessions SET idle_expires_at = least(greatest(idle_expires_at, \(idleExpiresAt.date)), absolute_expires_at),
                    last_used_at = greatest(coalesce(last_used_at, created_at), \(now.date))
                WHERE id = \(id)
                """,
                logger: logger
            )
        }
    }

    public func deleteSession(id: String, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            let rows = try await connection.query("DELETE FROM identity.sessions WHERE id = \(id) RETURNING 1", logger: logger)
            guard try await rows.decode(Int.self).all().count == 1 else { return false }
            try await Self.append(events, on: connection, logger: logger)
            return true
        }
    }

    public func deleteSessions(accountId: String, keeping: String?, events: @escaping @Sendable (Int) -> [AccountEvent]) async throws(IdentityStorageError) -> Int {
        try await transaction { connection, logger in
            let ended = try await Self.deleteSessions(accountId: accountId, keeping: keeping, on: connection, logger: logger)
            if keeping == nil {
                try await connection.query("DELETE FROM identity.oidc_grants WHERE account_id = \(accountId)", logger: logger)
            }
            try await Self.append(events(ended), on: connection, logger: logger)
            return ended
        }
    }

    // MARK: Failed logins

    public func recordFailures(keys: [String], at now: Timestamp, window: Duration, audit: [AuditRecord]) async throws(IdentityStorageError) {
        let windowStart = Timestamp(milliseconds: now.milliseconds - window.milliseconds)
        try await run { client, logger in
            // One statement for every key and the failure's audit entries; a count whose last failure left the window
            // starts again at 1.
            try await client.query(
                """
                WITH counted AS (
                    INSERT INTO identity.login_failures (key, count, last_failure_at)
                    SELECT key, 1, \(now.date) FROM unnest(\(keys)::text[]) AS key
                    ON CONFLICT (key) DO UPDATE SET
                        count = CASE WHEN identity.login_failures.last_failure_at < \(windowStart.date) THEN 1
                                     ELSE identity.login_failures.count + 1 END,
                        last_failure_at = excluded.last_failure_at
                ), audit AS (
                    \(auditInsert: AuditColumns(audit), after: nil)
                )
                SELECT 1
                """,
                logger: logger
            )
        }
    }

    public func takeAllowance(key: String, limit: Int, at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> FailureCount? {
        let windowStart = Timestamp(milliseconds: now.milliseconds - window.milliseconds)
        let taken = try await run { client, logger in
            // Counted only while under the limit (or out of the window): the row's lock orders concurrent takers, and
            // a refused one changes nothing.
            let rows = try await client.query(
                """
                INSERT INTO identity.login_failures AS f (key, count, last_failure_at) VALUES (\(key), 1, \(now.date))
                ON CONFLICT (key) DO UPDATE SET
                    count = CASE WHEN f.last_failure_at < \(windowStart.date) THEN 1 ELSE f.count + 1 END,
                    last_failure_at = excluded.last_failure_at
                WHERE f.last_failure_at < \(windowStart.date) OR f.count < \(limit)
                RETURNING 1
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).all().count == 1
        }
        guard !taken else { return nil }
        return try await failures(keys: [key], at: now, window: window)[0]
    }

    public func failures(keys: [String], at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> [FailureCount] {
        let windowStart = Timestamp(milliseconds: now.milliseconds - window.milliseconds)
        let found = try await run { client, logger in
            let rows = try await client.query(
                "SELECT key, count, last_failure_at FROM identity.login_failures WHERE key = ANY(\(keys)) AND last_failure_at >= \(windowStart.date)",
                logger: logger
            )
            var found: [String: FailureCount] = [:]
            for try await (key, count, last) in rows.decode((String, Int32, Date).self) {
                found[key] = FailureCount(count: Int(count), lastFailureAt: Timestamp(last))
            }
            return found
        }
        return keys.map { found[$0] ?? .none }
    }

    /// One statement: the failure counts aggregated into one row (always there), the credential joined to it.
    public func loginLookup(normalizedUserId: String, keys: [String], at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> LoginLookup {
        let windowStart = Timestamp(milliseconds: now.milliseconds - window.milliseconds)
        return try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT f.keys, f.counts, f.lasts,
                       EXISTS (SELECT 1 FROM identity.factors fa WHERE fa.account_id = c.account_id AND fa.confirmed AND fa.kind <> 'recoveryCodes'),
                       c.password_hash, \(unescaped: CredentialColumns.sql)
                FROM (
                    SELECT array_agg(key) AS keys, array_agg(count) AS counts, array_agg(last_failure_at) AS lasts
                    FROM identity.login_failures WHERE key = ANY(\(keys)) AND last_failure_at >= \(windowStart.date)
                ) AS f
                LEFT JOIN identity.credentials AS c ON c.normalized_user_id = \(normalizedUserId) AND NOT c.pending
                """,
                logger: logger
            )
            var found: [String: FailureCount] = [:]
            var credential: StoredCredential?
            var demandsSecondFactor = false
            for try await row in rows {
                let cells = row.makeRandomAccess()
                let failedKeys = try cells[0].decode([String]?.self)
                let counts = try cells[1].decode([Int32]?.self)
                let lasts = try cells[2].decode([Date]?.self)
                demandsSecondFactor = try cells[3].decode(Bool.self)
                for (index, key) in (failedKeys ?? []).enumerated() {
                    guard let counts, let lasts, index < counts.count, index < lasts.count else { break }
                    found[key] = FailureCount(count: Int(counts[index]), lastFailureAt: Timestamp(lasts[index]))
                }
                credential = try CredentialColumns.decode(cells, from: 5, passwordHash: try cells[4].decode(String?.self))
            }
            return LoginLookup(counts: keys.map { found[$0] ?? .none }, credential: credential, demandsSecondFactor: demandsSecondFactor)
        }
    }

    public func clearFailures(key: String) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query("DELETE FROM identity.login_failures WHERE key = \(key)", logger: logger)
        }
    }

    @discardableResult
    public func rememberClients(accountId: String, clients: [[UInt8]], at now: Timestamp) async throws(IdentityStorageError) -> Bool {
        guard !clients.isEmpty else { return true }
        return try await run { client, logger in
            // `xmax = 0` marks a row this statement inserted (an updated one carries the updating transaction's id):
            // whether the client was remembered before comes with the write, no read of its own.
            let rows = try await client.query(
                """
                INSERT INTO identity.known_clients (account_id, client_hash, last_success_at)
                SELECT c.account_id, decode(h, 'hex'), \(now.date) FROM identity.credentials c, unnest(\(clients.map(SessionAuthority.hex))::text[]) AS h
                WHERE c.account_id = \(accountId) AND NOT c.pending
                ON CONFLICT (account_id, client_hash) DO UPDATE SET last_success_at = greatest(known_clients.last_success_at, excluded.last_success_at)
                RETURNING xmax = 0
                """,
                logger: logger
            )
            let inserted = try await rows.decode(Bool.self).all()
            return inserted.isEmpty || inserted.contains(false)
        }
    }

    public func isKnownClient(accountId: String, clients: [[UInt8]], since: Timestamp) async throws(IdentityStorageError) -> Bool {
        guard !clients.isEmpty else { return false }
        return try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT 1 FROM identity.known_clients
                WHERE account_id = \(accountId) AND client_hash IN (SELECT decode(h, 'hex') FROM unnest(\(clients.map(SessionAuthority.hex))::text[]) AS h)
                    AND last_success_at >= \(since.date)
                LIMIT 1
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).all().count == 1
        }
    }

    public func pruneKnownClients(before cutoff: Timestamp) async throws(IdentityStorageError) -> Int {
        try await run { client, logger in
            let rows = try await client.query("DELETE FROM identity.known_clients WHERE last_success_at < \(cutoff.date) RETURNING 1", logger: logger)
            return try await rows.decode(Int.self).all().count
        }
    }

    public func pruneFailures(before cutoff: Timestamp) async throws(IdentityStorageError) -> Int {
        try await run { client, logger in
            let rows = try await client.query("DELETE FROM identity.login_failures WHERE last_failure_at < \(cutoff.date) RETURNING 1", logger: logger)
            return try await rows.decode(Int.self).all().count
        }
    }

    // MARK: Password reset

    public func createResetToken(tokenHash: [UInt8], accountId: String, expiresAt: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                "SELECT 1 FROM identity.credentials WHERE account_id = \(accountId) AND NOT pending FOR SHARE",
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
            try await connection.query(
                "INSERT INTO identity.reset_tokens (token_hash, account_id, expires_at) VALUES (\(ByteBuffer(bytes: tokenHash)), \(accountId), \(expiresAt.date))",
                logger: logger
            )
            try await Self.append(events, on: connection, logger: logger)
        }
    }

    public func resetTokenAccount(tokenHash: [UInt8], at now: Timestamp) async throws(IdentityStorageError) -> String? {
        try await run { client, logger in
            let rows = try await client.query(
                "SELECT account_id FROM identity.reset_tokens WHERE token_hash = \(ByteBuffer(bytes: tokenHash)) AND expires_at > \(now.date)",
                logger: logger
            )
            return try await rows.decode(String.self).all().first
        }
    }

    public func confirmPasswordReset(
        tokenHash: [UInt8],
        at now: Timestamp,
        passwordHash: String,
        events: @escaping @Sendable (String, Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> ConfirmedPasswordReset? {
        try await transaction { connection, logger in
            // Deleting the token is what makes it single-use: of two concurrent confirmations, one deletes it.
            let rows = try await connection.query(
                "DELETE FROM identity.reset_tokens WHERE token_hash = \(ByteBuffer(bytes: tokenHash)) RETURNING account_id, expires_at",
                logger: logger
            )
            var token: (accountId: String, expiresAt: Date)?
            for try await (accountId, expiresAt) in rows.decode((String, Date).self) {
                token = (accountId, expiresAt)
            }
            guard let token, now < Timestamp(token.expiresAt) else { return nil }
            let updated = try await connection.query(
                """
                UPDATE identity.credentials SET password_hash = \(passwordHash), credential_version = credential_version + 1
                WHERE account_id = \(token.accountId) AND NOT pending RETURNING 1
                """,
                logger: logger
            )
            guard try await updated.decode(Int.self).all().count == 1 else { return nil }
            // The mailbox is proven: a second factor locked by wrong answers opens (the requirement stays).
            try await connection.query("DELETE FROM identity.second_factor_answers WHERE account_id = \(token.accountId)", logger: logger)
            let ended = try await Self.endCredential(accountId: token.accountId, keeping: nil, on: connection, logger: logger)
            try await Self.append(events(token.accountId, ended), on: connection, logger: logger)
            return ConfirmedPasswordReset(accountId: token.accountId, sessionsEnded: ended)
        }
    }

    // MARK: Profile clean-ups

    public func dueProfileCleanups(at now: Timestamp, limit: Int) async throws(IdentityStorageError) -> [String] {
        try await run { client, logger in
            let rows = try await client.query(
                "SELECT account_id FROM identity.profile_cleanups WHERE not_before <= \(now.date) ORDER BY not_before, account_id LIMIT \(limit)",
                logger: logger
            )
            return try await rows.decode(String.self).all()
        }
    }

    public func finishProfileCleanup(accountId: String) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query("DELETE FROM identity.profile_cleanups WHERE account_id = \(accountId)", logger: logger)
        }
    }

    public func postponeProfileCleanup(accountId: String, until: Timestamp) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query("UPDATE identity.profile_cleanups SET not_before = \(until.date) WHERE account_id = \(accountId)", logger: logger)
        }
    }

    public func abandonStaleReservations(before cutoff: Timestamp, profileCleanupAt: Timestamp) async throws(IdentityStorageError) -> Int {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                "DELETE FROM identity.credentials WHERE pending AND created_at < \(cutoff.date) RETURNING account_id",
                logger: logger
            )
            let abandoned = try await rows.decode(String.self).all()
            for accountId in abandoned {
                try await Self.scheduleCleanup(accountId: accountId, at: profileCleanupAt, on: connection, logger: logger)
            }
            return abandoned.count
        }
    }

    public func pruneExpired(
        at now: Timestamp,
        profileCleanupAt: Timestamp,
        limit: Int,
        events: @escaping @Sendable (_ accountId: String) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> PrunedRecords {
        try await transaction { connection, logger in
            let sessions = try await connection.query(
                """
                DELETE FROM identity.sessions WHERE id IN (
                    SELECT id FROM identity.sessions WHERE idle_expires_at <= \(now.date) OR absolute_expires_at <= \(now.date) LIMIT \(limit)
                )
                RETURNING 1
                """,
                logger: logger
            )
            var pruned = PrunedRecords(sessions: try await sessions.decode(Int.self).all().count)
            let tokens = try await connection.query(
                """
                DELETE FROM identity.reset_tokens WHERE token_hash IN (
                    SELECT token_hash FROM identity.reset_tokens WHERE expires_at <= \(now.date) LIMIT \(limit)
                )
                RETURNING 1
                """,
                logger: logger
            )
            pruned.resetTokens = try await tokens.decode(Int.self).all().count
            try await connection.query(
                """
                DELETE FROM identity.email_verifications WHERE token_hash IN (
                    SELECT token_hash FROM identity.email_verifications WHERE expires_at <= \(now.date) LIMIT \(limit)
                )
                """,
                logger: logger
            )
            try await connection.query(
                """
                DELETE FROM identity.email_codes WHERE code_digest IN (
                    SELECT code_digest FROM identity.email_codes WHERE expires_at <= \(now.date) LIMIT \(limit)
                )
                """,
                logger: logger
            )
            try await connection.query(
                """
                DELETE FROM identity.used_nonces WHERE digest IN (
                    SELECT digest FROM identity.used_nonces WHERE expires_at <= \(now.date) LIMIT \(limit)
                )
                """,
                logger: logger
            )
            // Expired login challenges go with expired tokens (not counted: nothing outlives its expiry).
            try await connection.query(
                """
                DELETE FROM identity.login_challenges WHERE token_hash IN (
                    SELECT token_hash FROM identity.login_challenges WHERE expires_at <= \(now.date) LIMIT \(limit)
                )
                """,
                logger: logger
            )
            try await connection.query(
                """
                DELETE FROM identity.used_passkey_challenges WHERE challenge_hash IN (
                    SELECT challenge_hash FROM identity.used_passkey_challenges WHERE expires_at <= \(now.date) LIMIT \(limit)
                )
                """,
                logger: logger
            )
            try await Self.pruneOpenID(at: now, limit: limit, on: connection, logger: logger)
            // Created with its session in one transaction, so an anonymous account without one has lost its last.
            let anonymous = try await connection.query(
                """
                DELETE FROM identity.credentials WHERE account_id IN (
                    SELECT c.account_id FROM identity.credentials AS c
                    WHERE c.user_id IS NULL AND NOT c.pending
                      AND NOT EXISTS (SELECT 1 FROM identity.sessions AS s WHERE s.account_id = c.account_id)
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                )
                RETURNING account_id
                """,
                logger: logger
            )
            let accounts = try await anonymous.decode(String.self).all()
            for accountId in accounts {
                try await Self.scheduleCleanup(accountId: accountId, at: profileCleanupAt, on: connection, logger: logger)
            }
            try await Self.append(accounts.flatMap(events), on: connection, logger: logger)
            try await Self.eraseAudit(accountIds: accounts, on: connection, logger: logger)
            pruned.anonymousAccounts = accounts.count
            return pruned
        }
    }

    // MARK: Outbox and health

    public func pendingEvents(limit: Int) async throws(IdentityStorageError) -> [AccountEvent] {
        try await run { _, _ in try await outbox.pending(limit: limit) }
    }

    /// Reads from a table, so a database without the schema is not reported healthy.
    // MARK: Outbox relay

    public func drainOutbox(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int {
        try await outbox.drain(limit: limit, publish: publish)
    }

    public func watchOutbox(_ changed: @escaping @Sendable () -> Void) async throws {
        try await outbox.watch(changed)
    }

    private var outbox: PostgresOutbox { PostgresOutbox(client: client, schema: "identity", logger: logger) }

    public func checkHealth() async throws(IdentityStorageError) {
        try await run { client, logger in
            let rows = try await client.query("SELECT count(*) FROM (SELECT 1 FROM identity.credentials LIMIT 1) AS probe", logger: logger)
            for try await _ in rows.decode(Int64.self) {}
        }
    }

    // MARK: Helpers

    /// Locks the account's row FOR SHARE (as a login's session insert does), so a concurrent credential change or
    /// deletion waits for this transaction; `notFound` when it is gone, pending, or (given a version) changed since.
    static func lockAccount(_ accountId: String, credentialVersion: Int64? = nil, on connection: PostgresConnection, logger: Logger) async throws {
        let rows = try await connection.query(
            """
            SELECT 1 FROM identity.credentials
            WHERE account_id = \(accountId) AND NOT pending AND (\(credentialVersion)::bigint IS NULL OR credential_version = \(credentialVersion))
            FOR SHARE
            """,
            logger: logger
        )
        guard try await rows.decode(Int.self).all().count == 1 else { throw IdentityStorageError(.notFound) }
    }

    static func insert(_ session: StoredSession, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO identity.sessions (id, account_id, token_hash, created_at, idle_expires_at, absolute_expires_at, privileged_until,
                                           credential_version, assurance_level, last_used_at, sign_in_method, client_address, client_name)
            VALUES (\(session.id), \(session.accountId), \(ByteBuffer(bytes: session.tokenHash)), \(session.createdAt.date),
                    \(session.idleExpiresAt.date), \(session.absoluteExpiresAt.date), \(session.privilegedUntil?.date),
                    \(session.credentialVersion), \(Int16(session.assuranceLevel)), \(session.lastUsedAt?.date), \(session.signInMethod),
                    \(session.clientAddress), \(session.clientName))
            """,
            logger: logger
        )
    }

    /// After the credential's version was raised (in this transaction, which holds its row): every session but
    /// `keeping` ends, that one moves to the new version, and every reset token of the account goes. A login that
    /// checked the old credential either inserted its session before the raise (its FOR SHARE made the raise wait;
    /// it is deleted here) or finds the version changed and inserts nothing. Returns how many sessions ended.
    private static func endCredential(accountId: String, keeping: String?, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        if let keeping {
            try await connection.query(
                """
                UPDATE identity.sessions SET credential_version = c.credential_version FROM identity.credentials c
                WHERE sessions.id = \(keeping) AND sessions.account_id = \(accountId) AND c.account_id = sessions.account_id
                """,
                logger: logger
            )
        }
        try await connection.query("DELETE FROM identity.reset_tokens WHERE account_id = \(accountId)", logger: logger)
        try await connection.query("DELETE FROM identity.email_codes WHERE account_id = \(accountId)", logger: logger)
        return try await deleteSessions(accountId: accountId, keeping: keeping, on: connection, logger: logger)
    }

    private static func deleteSessions(accountId: String, keeping: String?, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query(
            "DELETE FROM identity.sessions WHERE account_id = \(accountId) AND id IS DISTINCT FROM \(keeping) RETURNING 1",
            logger: logger
        )
        return try await rows.decode(Int.self).all().count
    }

    private static func scheduleCleanup(accountId: String, at time: Timestamp, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO identity.profile_cleanups (account_id, not_before) VALUES (\(accountId), \(time.date))
            ON CONFLICT (account_id) DO UPDATE SET not_before = least(identity.profile_cleanups.not_before, excluded.not_before)
            """,
            logger: logger
        )
    }

    /// Every event in one statement, in order (the outbox's position follows the insert order).
    /// Their audit entries (``AuditRecord/records(for:scope:)``) go with them, in the same transaction.
    static func append(_ events: [AccountEvent], on connection: PostgresConnection, logger: Logger) async throws {
        try await PostgresOutbox.append(events, schema: "identity", on: connection, logger: logger)
        try await appendAudit(AuditRecord.records(for: events), on: connection, logger: logger)
    }

    private static let uniqueViolation = "23505"
    /// PostgreSQL's name for the `UNIQUE` on `credentials.normalized_user_id`.
    private static let userIdConstraint = "credentials_normalized_user_id_key"

    /// One statement on the pool, its failures classified.
    @discardableResult
    func run<T: Sendable>(
        operation: String = #function,
        _ body: @escaping @Sendable (PostgresClient, Logger) async throws -> T
    ) async throws(IdentityStorageError) -> T {
        let (client, logger, timeout) = (client, logger, operationTimeout)
        do {
            return try await StatementSpan.run(operation, schema: "identity") {
                try await OperationTimeout.run(timeout) { try await body(client, logger) }
            }
        } catch {
            throw classify(error)
        }
    }

    /// One transaction; an ``IdentityStorageError`` thrown inside rolls it back and is passed on as it is.
    func transaction<T: Sendable>(
        operation: String = #function,
        _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws(IdentityStorageError) -> T {
        let (client, logger, timeout) = (client, logger, operationTimeout)
        do {
            return try await StatementSpan.run(operation, schema: "identity") {
                try await OperationTimeout.run(timeout) {
                    try await client.withTransaction(logger: logger) { connection in
                        try await body(connection, logger)
                    }
                }
            }
        } catch {
            throw classify(error)
        }
    }

    private func classify(_ error: any Error) -> IdentityStorageError {
        if let error = error as? IdentityStorageError {
            return error
        }
        if let error = error as? PostgresTransactionError, let cause = error.closureError ?? error.beginError ?? error.commitError {
            return classify(cause)
        }
        if let error = error as? PSQLError, error.serverInfo?[.sqlState] == Self.uniqueViolation,
           error.serverInfo?[.constraintName] == Self.userIdConstraint {
            return IdentityStorageError(.conflict, underlying: error)
        }
        if let unavailable = PostgresFailure.unavailability(of: error) {
            return IdentityStorageError(.unavailable, underlying: unavailable)
        }
        if error is CancellationError {
            return IdentityStorageError(.unavailable, underlying: error)
        }
        logger.error("identity storage query failed", metadata: ["konto.error": "\(PostgresFailure.summary(of: error))"])
        return IdentityStorageError(.failure, underlying: error)
    }
}

extension AsyncSequence {
    /// Every element (the queries here return a handful of rows at most).
    func all() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self {
            elements.append(element)
        }
        return elements
    }
}


extension PostgresQuery.StringInterpolation {
    /// A session's insert as one data-modifying `WITH` part's body (`created AS (\(sessionInsert: session, from:
    /// "account"))`): inserted once per row of the part named `from`, whose `account_id` it takes, returning that
    /// `account_id`. `source` is the caller's literal, never input.
    mutating func appendInterpolation(sessionInsert session: StoredSession, from source: StaticString) {
        appendLiteral("""
            INSERT INTO identity.sessions (id, account_id, token_hash, created_at, idle_expires_at, absolute_expires_at, privileged_until,
                                           credential_version, assurance_level, last_used_at, sign_in_method, client_address, client_name)
            SELECT
            """)
        appendLiteral(" ")
        appendInterpolation(session.id)
        appendLiteral(", account_id, ")
        appendInterpolation(ByteBuffer(bytes: session.tokenHash))
        appendLiteral(", ")
        appendInterpolation(session.createdAt.date)
        appendLiteral(", ")
        appendInterpolation(session.idleExpiresAt.date)
        appendLiteral(", ")
        appendInterpolation(session.absoluteExpiresAt.date)
        appendLiteral(", ")
        appendInterpolation(session.privilegedUntil?.date)
        appendLiteral(", ")
        appendInterpolation(session.credentialVersion)
        appendLiteral(", ")
        appendInterpolation(Int16(session.assuranceLevel))
        appendLiteral(", ")
        appendInterpolation(session.lastUsedAt?.date)
        appendLiteral(", ")
        appendInterpolation(session.signInMethod)
        appendLiteral(", ")
        appendInterpolation(session.clientAddress)
        appendLiteral(", ")
        appendInterpolation(session.clientName)
        appendLiteral("\nFROM \(source)\nRETURNING account_id")
    }
}
