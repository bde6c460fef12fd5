import Foundation
import KontoEvents
import KontoModel
import KontoPostgres
import NIOCore
import PostgresNIO

extension PostgresIdentityStorage {
    public func factors(accountId: String) async throws(IdentityStorageError) -> [StoredFactor] {
        try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT f.id, f.kind, f.name, f.sealed_secret, f.confirmed, f.created_at, f.last_used_at, f.last_used_step,
                       (SELECT count(*) FROM identity.recovery_codes r WHERE r.factor_id = f.id AND r.used_at IS NULL),
                       f.credential_id, f.sign_count
                FROM identity.factors f WHERE f.account_id = \(accountId)
                ORDER BY f.created_at, f.id
                """,
                logger: logger
            )
            var factors: [StoredFactor] = []
            for try await (id, kind, name, secret, confirmed, createdAt, lastUsedAt, lastUsedStep, unused, credentialId, signCount)
                in rows.decode((String, String, String, ByteBuffer?, Bool, Date, Date?, Int64?, Int64, ByteBuffer?, Int64?).self) {
                guard let kind = StoredFactor.Kind(rawValue: kind) else { continue }
                factors.append(StoredFactor(
                    id: id, accountId: accountId, kind: kind, name: name, sealedSecret: secret.map { Array($0.readableBytesView) },
                    confirmed: confirmed, createdAt: Timestamp(createdAt), lastUsedAt: lastUsedAt.map(Timestamp.init),
                    lastUsedStep: lastUsedStep, remaining: kind == .recoveryCodes ? Int(unused) : nil,
                    credentialId: credentialId.map { Array($0.readableBytesView) }, signCount: signCount
                ))
            }
            return factors
        }
    }

    public func addPendingFactor(_ factor: StoredFactor) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            try await Self.lockAccount(factor.accountId, on: connection, logger: logger)
            try await connection.query("DELETE FROM identity.factors WHERE account_id = \(factor.accountId) AND NOT confirmed", logger: logger)
            try await connection.query(
                """
                INSERT INTO identity.factors (id, account_id, kind, name, sealed_secret, confirmed, created_at)
                VALUES (\(factor.id), \(factor.accountId), \(factor.kind.rawValue), \(factor.name),
                        \(factor.sealedSecret.map { ByteBuffer(bytes: $0) }), false, \(factor.createdAt.date))
                """,
                logger: logger
            )
        }
    }

    public func confirmFactor(accountId: String, factorId: String, step: Int64, at now: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                """
                UPDATE identity.factors SET confirmed = true, last_used_step = \(step), last_used_at = \(now.date)
                WHERE id = \(factorId) AND account_id = \(accountId) AND NOT confirmed
                RETURNING 1
                """,
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { return false }
            try await Self.append(events, on: connection, logger: logger)
            return true
        }
    }

    public func useFactorStep(accountId: String, factorId: String, step: Int64, at now: Timestamp) async throws(IdentityStorageError) -> Bool {
        try await run { client, logger in
            // One conditional update: of two concurrent uses of one step, the second finds it used. The wrong
            // answers' count is cleared in the same statement, only when the step was used.
            let rows = try await client.query(
                """
                WITH used AS (
                    UPDATE identity.factors SET last_used_step = \(step), last_used_at = \(now.date)
                    WHERE id = \(factorId) AND account_id = \(accountId) AND confirmed
                      AND (last_used_step IS NULL OR last_used_step < \(step))
                    RETURNING account_id
                ), cleared AS (
                    DELETE FROM identity.second_factor_answers WHERE account_id IN (SELECT account_id FROM used)
                )
                SELECT count(*) FROM used
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).all().first == 1
        }
    }

    public func removeFactor(
        accountId: String,
        factorId: String,
        events: @escaping @Sendable (StoredFactor.Kind, Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> (kind: StoredFactor.Kind, remaining: Int)? {
        try await transaction { connection, logger in
            let removed = try await connection.query(
                "DELETE FROM identity.factors WHERE id = \(factorId) AND account_id = \(accountId) RETURNING kind, confirmed",
                logger: logger
            )
            guard let (kindName, confirmed) = try await removed.decode((String, Bool).self).all().first,
                  let kind = StoredFactor.Kind(rawValue: kindName)
            else { return nil }
            let left = try await connection.query(
                "SELECT count(*) FROM identity.factors WHERE account_id = \(accountId) AND confirmed AND kind <> 'recoveryCodes'",
                logger: logger
            )
            let remaining = Int(try await left.decode(Int64.self).all().first ?? 0)
            // A pending enrolment was never announced: its removal is not either.
            if confirmed { try await Self.append(events(kind, remaining), on: connection, logger: logger) }
            return (kind, remaining)
        }
    }

    public func addPasskey(_ factor: StoredFactor, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            try await Self.lockAccount(factor.accountId, on: connection, logger: logger)
            // A credential ID taken is no error for the transaction: the insert does nothing and says so.
            let rows = try await connection.query(
                """
                INSERT INTO identity.factors (id, account_id, kind, name, sealed_secret, confirmed, created_at, credential_id, sign_count)
                VALUES (\(factor.id), \(factor.accountId), 'passkey', \(factor.name), \(factor.sealedSecret.map { ByteBuffer(bytes: $0) }),
                        true, \(factor.createdAt.date), \(factor.credentialId.map { ByteBuffer(bytes: $0) }), \(factor.signCount ?? 0))
                ON CONFLICT (credential_id) WHERE credential_id IS NOT NULL DO NOTHING
                RETURNING 1
                """,
                logger: logger
            )
            guard try await rows.decode(Int.self).all().count == 1 else { return false }
            try await Self.append(events, on: connection, logger: logger)
            return true
        }
    }

    public func passkey(credentialId: [UInt8]) async throws(IdentityStorageError) -> StoredFactor? {
        try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT id, account_id, name, sealed_secret, created_at, last_used_at, sign_count
                FROM identity.factors WHERE credential_id = \(ByteBuffer(bytes: credentialId)) AND kind = 'passkey' AND confirmed
                """,
                logger: logger
            )
            for try await (id, accountId, name, secret, createdAt, lastUsedAt, signCount) in rows.decode((String, String, String, ByteBuffer?, Date, Date?, Int64?).self) {
                return StoredFactor(
                    id: id, accountId: accountId, kind: .passkey, name: name, sealedSecret: secret.map { Array($0.readableBytesView) },
                    confirmed: true, createdAt: Timestamp(createdAt), lastUsedAt: lastUsedAt.map(Timestamp.init),
                    credentialId: credentialId, signCount: signCount
                )
            }
            return nil
        }
    }

    public func usePasskey(accountId: String, factorId: String, signCount: Int64, newSignCount: Int64, at now: Timestamp) async throws(IdentityStorageError) -> Bool {
        try await run { client, logger in
            // One conditional update: of two concurrent uses signed with one counter value, the second finds it moved.
            let rows = try await client.query(
                """
                UPDATE identity.factors SET sign_count = \(newSignCount), last_used_at = \(now.date)
                WHERE id = \(factorId) AND account_id = \(accountId) AND kind = 'passkey' AND sign_count = \(signCount)
                RETURNING 1
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).all().count == 1
        }
    }

    public func consumePasskeyChallenge(hash: [UInt8], expiresAt: Timestamp) async throws(IdentityStorageError) -> Bool {
        try await run { client, logger in
            let rows = try await client.query(
                """
                INSERT INTO identity.used_passkey_challenges (challenge_hash, expires_at)
                VALUES (\(ByteBuffer(bytes: hash)), \(expiresAt.date))
                ON CONFLICT (challenge_hash) DO NOTHING
                RETURNING 1
                """,
                logger: logger
            )
            return try await rows.decode(Int.self).all().count == 1
        }
    }

    public func replaceRecoveryCodes(_ factor: StoredFactor, codeHashes: [[UInt8]], events: [AccountEvent]) async throws(IdentityStorageError) {
        try await transaction { connection, logger in
            try await Self.lockAccount(factor.accountId, on: connection, logger: logger)
            try await connection.query(
                "DELETE FROM identity.factors WHERE account_id = \(factor.accountId) AND kind = 'recoveryCodes'",
                logger: logger
            )
            try await connection.query(
                """
                INSERT INTO identity.factors (id, account_id, kind, name, confirmed, created_at)
                VALUES (\(factor.id), \(factor.accountId), 'recoveryCodes', \(factor.name), true, \(factor.createdAt.date))
                """,
                logger: logger
            )
            try await connection.query(
                """
                INSERT INTO identity.recovery_codes (factor_id, code_hash)
                SELECT \(factor.id), hash FROM unnest(\(codeHashes.map { ByteBuffer(bytes: $0) })::bytea[]) AS hash
                """,
                logger: logger
            )
            try await Self.append(events, on: connection, logger: logger)
        }
    }

    public func useRecoveryCode(
        accountId: String,
        codeHash: [UInt8],
        at now: Timestamp,
        events: @escaping @Sendable (Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> Int? {
        try await transaction { connection, logger in
            // The conditional update is the single use: a concurrent use of the same code waits for this row's lock
            // and then finds it used.
            let used = try await connection.query(
                """
                UPDATE identity.recovery_codes r SET used_at = \(now.date)
                FROM identity.factors f
                WHERE r.factor_id = f.id AND f.account_id = \(accountId) AND f.kind = 'recoveryCodes'
                  AND r.code_hash = \(ByteBuffer(bytes: codeHash)) AND r.used_at IS NULL
                RETURNING f.id
                """,
                logger: logger
            )
            guard let factorId = try await used.decode(String.self).all().first else { return nil }
            try await connection.query("UPDATE identity.factors SET last_used_at = \(now.date) WHERE id = \(factorId)", logger: logger)
            let left = try await connection.query(
                "SELECT count(*) FROM identity.recovery_codes WHERE factor_id = \(factorId) AND used_at IS NULL",
                logger: logger
            )
            let remaining = Int(try await left.decode(Int64.self).all().first ?? 0)
            try await Self.append(events(remaining), on: connection, logger: logger)
            return remaining
        }
    }

    public func createChallenge(_ challenge: StoredChallenge) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query(
                """
                INSERT INTO identity.login_challenges (token_hash, account_id, credential_version, expires_at)
                VALUES (\(ByteBuffer(bytes: challenge.tokenHash)), \(challenge.accountId), \(challenge.credentialVersion), \(challenge.expiresAt.date))
                """,
                logger: logger
            )
        }
    }

    public func answerChallenge(tokenHash: [UInt8], at now: Timestamp, allowing: Int) async throws(IdentityStorageError) -> StoredChallenge? {
        try await run { client, logger in
            // The answer is taken in the statement that finds the challenge: of concurrent answers, `allowing` at most.
            let rows = try await client.query(
                """
                UPDATE identity.login_challenges SET answers = answers + 1
                WHERE token_hash = \(ByteBuffer(bytes: tokenHash)) AND expires_at > \(now.date) AND answers < \(allowing)
                RETURNING account_id, credential_version, expires_at
                """,
                logger: logger
            )
            guard let (accountId, version, expiresAt) = try await rows.decode((String, Int64, Date).self).all().first else { return nil }
            return StoredChallenge(tokenHash: tokenHash, accountId: accountId, credentialVersion: version, expiresAt: Timestamp(expiresAt))
        }
    }

    public func countFactorAnswer(accountId: String) async throws(IdentityStorageError) -> Int? {
        try await run { client, logger in
            // One statement: the row's lock orders concurrent answers, each returning its own count.
            let rows = try await client.query(
                """
                INSERT INTO identity.second_factor_answers AS a (account_id, count)
                SELECT account_id, 1 FROM identity.credentials WHERE account_id = \(accountId) AND NOT pending
                ON CONFLICT (account_id) DO UPDATE SET count = a.count + 1
                RETURNING count
                """,
                logger: logger
            )
            return try await rows.decode(Int32.self).all().first.map(Int.init)
        }
    }

    public func factorAnswers(accountId: String) async throws(IdentityStorageError) -> Int {
        try await run { client, logger in
            let rows = try await client.query("SELECT count FROM identity.second_factor_answers WHERE account_id = \(accountId)", logger: logger)
            return Int(try await rows.decode(Int32.self).all().first ?? 0)
        }
    }

    public func clearFactorAnswers(accountId: String) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query("DELETE FROM identity.second_factor_answers WHERE account_id = \(accountId)", logger: logger)
        }
    }

    public func appendEvents(_ events: [AccountEvent]) async throws(IdentityStorageError) {
        guard !events.isEmpty else { return }
        try await transaction { connection, logger in
            try await Self.append(events, on: connection, logger: logger)
        }
    }

    public func completeChallenge(tokenHash: [UInt8], at now: Timestamp, session: StoredSession, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool {
        // One statement, as createSession's (atomic on its own; one round trip instead of six): the account's row
        // first, FOR SHARE (a concurrent credential change waits, then ends this session with the rest, or came first
        // and this finds the version changed), then the challenge used up, and only then the session and its events.
        let (found, used) = try await run { client, logger in
            let outbox = try AccountEventColumns(events)
            let audit = AuditColumns(AuditRecord.records(for: events))
            let rows = try await client.query(
                """
                WITH account AS (
                    SELECT account_id FROM identity.credentials
                    WHERE account_id = \(session.accountId) AND NOT pending AND credential_version = \(session.credentialVersion)
                    FOR SHARE
                ), used AS (
                    DELETE FROM identity.login_challenges
                    WHERE token_hash = \(ByteBuffer(bytes: tokenHash)) AND account_id IN (SELECT account_id FROM account)
                      AND expires_at > \(now.date)
                    RETURNING account_id
                ), created AS (
                    \(sessionInsert: session, from: "used")
                ), events AS (
                    \(outboxInsert: outbox, schema: "identity", after: "created")
                ), audit AS (
                    \(auditInsert: audit, after: "created")
                )
                SELECT (SELECT count(*) FROM account), (SELECT count(*) FROM created)
                """,
                logger: logger
            )
            return try await rows.decode((Int, Int).self).all().first ?? (0, 0)
        }
        guard found == 1 else { throw IdentityStorageError(.notFound) }
        return used == 1
    }
}
