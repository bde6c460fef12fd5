import Foundation
import KontoContracts
import KontoModel
import NIOCore
import PostgresNIO

extension PostgresIdentityStorage {
    public func createOperatorKey(_ key: StoredOperatorKey, onlyIfNone: Bool) async throws(IdentityStorageError) -> Bool {
        try await transaction { connection, logger in
            if onlyIfNone {
                // Replicas starting together with the same bootstrap key: one inserts, the others find a key.
                try await connection.query("LOCK TABLE identity.operator_keys IN SHARE ROW EXCLUSIVE MODE", logger: logger)
                let existing = try await connection.query("SELECT 1 FROM identity.operator_keys LIMIT 1", logger: logger)
                guard try await existing.decode(Int.self).all().isEmpty else { return false }
            }
            let inserted = try await connection.query(
                """
                INSERT INTO identity.operator_keys (id, name, scopes, secret_hash, created_at, created_by, expires_at)
                VALUES (\(key.id), \(key.name), \(key.scopes.map(\.rawValue)), \(ByteBuffer(bytes: key.secretHash)), \(key.createdAt.date),
                        \(key.createdBy), \(key.expiresAt?.date))
                ON CONFLICT (id) DO NOTHING
                RETURNING 1
                """,
                logger: logger
            )
            return try await inserted.decode(Int.self).all().count == 1
        }
    }

    private static let operatorKeyColumns = "id, name, scopes, secret_hash, created_at, created_by, expires_at, last_used_at, revoked_at"

    private static func decodeKeys(_ rows: PostgresRowSequence) async throws -> [StoredOperatorKey] {
        var keys: [StoredOperatorKey] = []
        for try await (id, name, scopes, hash, createdAt, createdBy, expiresAt, lastUsedAt, revokedAt)
            in rows.decode((String, String, [String], ByteBuffer, Date, String?, Date?, Date?, Date?).self) {
            keys.append(StoredOperatorKey(
                id: id, name: name, scopes: scopes.compactMap(OperatorScope.init(rawValue:)), secretHash: Array(hash.readableBytesView),
                createdAt: Timestamp(createdAt), createdBy: createdBy, expiresAt: expiresAt.map(Timestamp.init),
                lastUsedAt: lastUsedAt.map(Timestamp.init), revokedAt: revokedAt.map(Timestamp.init)
            ))
        }
        return keys
    }

    public func operatorKey(id: String) async throws(IdentityStorageError) -> StoredOperatorKey? {
        try await run { client, logger in
            try await Self.decodeKeys(client.query(
                PostgresQuery(unsafeSQL: "SELECT \(Self.operatorKeyColumns) FROM identity.operator_keys WHERE id = $1", binds: Self.binding(id)),
                logger: logger
            )).first
        }
    }

    public func operatorKeys() async throws(IdentityStorageError) -> [StoredOperatorKey] {
        try await run { client, logger in
            try await Self.decodeKeys(client.query(
                PostgresQuery(unsafeSQL: "SELECT \(Self.operatorKeyColumns) FROM identity.operator_keys ORDER BY created_at, id"),
                logger: logger
            ))
        }
    }

    public func revokeOperatorKey(id: String, at now: Timestamp) async throws(IdentityStorageError) -> OperatorKeyRevocation {
        try await transaction { connection, logger in
            // Revocations (and the bootstrap's insert) one at a time: of two revoking the last two managers, the second
            // sees the first's.
            try await connection.query("LOCK TABLE identity.operator_keys IN SHARE ROW EXCLUSIVE MODE", logger: logger)
            let rows = try await connection.query(
                """
                SELECT revoked_at IS NULL AND (expires_at IS NULL OR expires_at > \(now.date)) AND 'keys:write' = ANY (scopes),
                    (SELECT count(*) FROM identity.operator_keys WHERE id <> \(id) AND revoked_at IS NULL
                        AND (expires_at IS NULL OR expires_at > \(now.date)) AND 'keys:write' = ANY (scopes))
                FROM identity.operator_keys WHERE id = \(id)
                """,
                logger: logger
            )
            guard let (manages, otherManagers) = try await rows.decode((Bool, Int64).self).all().first else { return .notFound }
            if manages, otherManagers == 0 { return .lastKeyManager }
            try await connection.query(
                "UPDATE identity.operator_keys SET revoked_at = COALESCE(revoked_at, \(now.date)) WHERE id = \(id)", logger: logger
            )
            return .revoked
        }
    }

    public func touchOperatorKey(id: String, at now: Timestamp) async throws(IdentityStorageError) {
        try await run { client, logger in
            try await client.query(
                "UPDATE identity.operator_keys SET last_used_at = greatest(last_used_at, \(now.date)) WHERE id = \(id)",
                logger: logger
            )
        }
    }

    public func searchAccounts(_ search: AccountSearch, countLimit: Int) async throws(IdentityStorageError) -> AccountSearchResult {
        try await run { client, logger in
            let (filter, binds) = try Self.searchFilter(search)
            var pageBinds = binds
            var pageFilter = filter
            if let after = search.after {
                pageBinds.append(after.createdAt.date)
                pageBinds.append(after.accountId)
                pageFilter += " AND (c.created_at, c.account_id) < ($\(pageBinds.count - 1), $\(pageBinds.count))"
            }
            pageBinds.append(search.limit)
            let page = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                    SELECT c.account_id, c.user_id, c.created_at, c.email_verified_at IS NOT NULL OR c.verified_email IS NOT NULL, c.disabled_at IS NOT NULL
                    FROM identity.credentials c WHERE \(pageFilter)
                    ORDER BY c.created_at DESC, c.account_id DESC LIMIT $\(pageBinds.count)
                    """,
                    binds: pageBinds
                ),
                logger: logger
            )
            var accounts: [IdentityAccountSummary] = []
            for try await (accountId, userId, createdAt, verified, disabled) in page.decode((String, String?, Date, Bool, Bool).self) {
                accounts.append(IdentityAccountSummary(
                    accountId: accountId, userId: userId, anonymous: userId == nil, verified: verified, disabled: disabled, createdAt: Timestamp(createdAt)
                ))
            }
            // Counted exactly up to the limit; above it, the planner's estimate (as a listing's "about 120,000").
            var countBinds = binds
            countBinds.append(countLimit + 1)
            let counted = try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT count(*) FROM (SELECT 1 FROM identity.credentials c WHERE \(filter) LIMIT $\(countBinds.count)) matching",
                    binds: countBinds
                ),
                logger: logger
            )
            let count = try await counted.decode(Int.self).all().first ?? 0
            guard count > countLimit else { return AccountSearchResult(accounts: accounts, total: count, totalIsExact: true) }
            let plan = try await client.query(
                PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) SELECT 1 FROM identity.credentials c WHERE \(filter)", binds: binds),
                logger: logger
            )
            let planText = try await plan.decode(String.self).all().first ?? "[]"
            let estimate = Self.plannedRows(planText) ?? count
            return AccountSearchResult(accounts: accounts, total: max(estimate, count), totalIsExact: false)
        }
    }

    /// The search's conditions on `identity.credentials c`, every value a bind.
    static func searchFilter(_ search: AccountSearch) throws -> (String, PostgresBindings) {
        var binds = PostgresBindings()
        var conditions = ["NOT c.pending"]
        func bind(_ value: some PostgresThrowingDynamicTypeEncodable) throws -> String {
            try binds.append(value)
            return "$\(binds.count)"
        }
        if let prefix = search.userIdPrefix {
            conditions.append("lower(c.user_id) LIKE \(try bind(Self.likeEscaped(prefix) + "%"))")
        }
        if let contains = search.userIdContains {
            conditions.append("lower(c.user_id) LIKE \(try bind("%" + Self.likeEscaped(contains) + "%"))")
        }
        if let verified = search.verified {
            conditions.append("(c.email_verified_at IS NOT NULL OR c.verified_email IS NOT NULL) = \(try bind(verified))")
        }
        if let disabled = search.disabled {
            conditions.append("(c.disabled_at IS NOT NULL) = \(try bind(disabled))")
        }
        if let anonymous = search.anonymous {
            conditions.append("(c.user_id IS NULL) = \(try bind(anonymous))")
        }
        if let after = search.createdAfter {
            conditions.append("c.created_at >= \(try bind(after.date))")
        }
        if let before = search.createdBefore {
            conditions.append("c.created_at < \(try bind(before.date))")
        }
        if let hasSecondFactor = search.hasSecondFactor {
            conditions.append(
                "EXISTS (SELECT 1 FROM identity.factors f WHERE f.account_id = c.account_id AND f.confirmed AND f.kind <> 'recoveryCodes') = \(try bind(hasSecondFactor))"
            )
        }
        if let provider = search.provider {
            conditions.append("EXISTS (SELECT 1 FROM identity.external_identities e WHERE e.account_id = c.account_id AND e.provider = \(try bind(provider)))")
        }
        return (conditions.joined(separator: " AND "), binds)
    }

    /// LIKE's own characters (`%`, `_` and its escape `\`) matched as themselves.
    static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// The top plan node's row estimate from `EXPLAIN (FORMAT JSON)`.
    static func plannedRows(_ json: String) -> Int? {
        guard let plans = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]],
              let plan = plans.first?["Plan"] as? [String: Any],
              let rows = plan["Plan Rows"] as? NSNumber
        else { return nil }
        return rows.intValue
    }

    static func binding(_ value: String) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(value)
        return binds
    }

    public func setAccountDisabled(accountId: String, disabled: Bool, at now: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) -> AccountDisabling {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                "SELECT disabled_at IS NOT NULL FROM identity.credentials WHERE account_id = \(accountId) AND NOT pending FOR UPDATE",
                logger: logger
            )
            guard let wasDisabled = try await rows.decode(Bool.self).all().first else { return .notFound }
            guard wasDisabled != disabled else { return .unchanged }
            var ended = 0
            if disabled {
                // As a password change does: a new credential version (a sign-in under way cannot store its session),
                // every session, reset token and sign-in code gone.
                try await connection.query(
                    "UPDATE identity.credentials SET disabled_at = \(now.date), credential_version = credential_version + 1 WHERE account_id = \(accountId)",
                    logger: logger
                )
                let deleted = try await connection.query("DELETE FROM identity.sessions WHERE account_id = \(accountId) RETURNING 1", logger: logger)
                ended = try await deleted.decode(Int.self).all().count
                try await connection.query("DELETE FROM identity.reset_tokens WHERE account_id = \(accountId)", logger: logger)
                try await connection.query("DELETE FROM identity.email_codes WHERE account_id = \(accountId)", logger: logger)
            } else {
                try await connection.query("UPDATE identity.credentials SET disabled_at = NULL WHERE account_id = \(accountId)", logger: logger)
            }
            try await Self.append(events, on: connection, logger: logger)
            return .changed(sessionsEnded: ended)
        }
    }

    public func accountSessions(accountId: String) async throws(IdentityStorageError) -> [StoredSession]? {
        try await run { client, logger in
            let rows = try await client.query(
                """
                SELECT c.credential_version, s.id, s.token_hash, s.created_at, s.idle_expires_at, s.absolute_expires_at, s.privileged_until, s.assurance_level,
                       s.last_used_at, s.sign_in_method, s.client_address, s.client_name
                FROM identity.credentials c LEFT JOIN identity.sessions s ON s.account_id = c.account_id AND s.credential_version = c.credential_version
                WHERE c.account_id = \(accountId) AND NOT c.pending
                ORDER BY s.created_at, s.id
                """,
                logger: logger
            )
            var found = false
            var sessions: [StoredSession] = []
            for try await (version, id, hash, createdAt, idle, absolute, privileged, level, lastUsed, method, address, name)
                in rows.decode((Int64, String?, ByteBuffer?, Date?, Date?, Date?, Date?, Int16?, Date?, String?, String?, String?).self) {
                found = true
                guard let id, let hash, let createdAt, let idle, let absolute else { continue }
                sessions.append(StoredSession(
                    id: id, accountId: accountId, tokenHash: Array(hash.readableBytesView), createdAt: Timestamp(createdAt), idleExpiresAt: Timestamp(idle),
                    absoluteExpiresAt: Timestamp(absolute), privilegedUntil: privileged.map(Timestamp.init), credentialVersion: version,
                    assuranceLevel: Int(level ?? 1), lastUsedAt: lastUsed.map(Timestamp.init), signInMethod: method, clientAddress: address, clientName: name
                ))
            }
            return found ? sessions : nil
        }
    }

    public func accountRecord(accountId: String, userIdType: UserIdType) async throws(IdentityStorageError) -> IdentityAccountRecord? {
        try await run { client, logger in
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                    SELECT \(CredentialColumns.sql), c.password_hash IS NOT NULL,
                        (SELECT max(k.last_success_at) FROM identity.known_clients k WHERE k.account_id = c.account_id),
                        (SELECT count(*) FROM identity.sessions s WHERE s.account_id = c.account_id)
                    FROM identity.credentials c WHERE c.account_id = $1 AND NOT c.pending
                    """,
                    binds: Self.binding(accountId)
                ),
                logger: logger
            )
            var found: (StoredCredential, Bool, Date?, Int)?
            for try await row in rows {
                let cells = row.makeRandomAccess()
                guard let credential = try CredentialColumns.decode(cells, from: 0) else { continue }
                found = (
                    credential, try cells[CredentialColumns.count].decode(Bool.self), try cells[CredentialColumns.count + 1].decode(Date?.self),
                    try cells[CredentialColumns.count + 2].decode(Int.self)
                )
            }
            guard let (credential, hasPassword, lastSignIn, sessions) = found else { return nil }
            let factorRows = try await client.query(
                "SELECT id, kind, name, created_at FROM identity.factors WHERE account_id = \(accountId) AND confirmed ORDER BY created_at, id",
                logger: logger
            )
            var factors: [IdentityAccountRecord.Factor] = []
            for try await (id, kind, name, createdAt) in factorRows.decode((String, String, String, Date).self) {
                factors.append(.init(id: id, kind: kind, name: name, createdAt: Timestamp(createdAt)))
            }
            let identityRows = try await client.query(
                "SELECT id, provider, created_at, last_used_at FROM identity.external_identities WHERE account_id = \(accountId) ORDER BY created_at, id",
                logger: logger
            )
            var identities: [IdentityAccountRecord.Identity] = []
            for try await (id, provider, createdAt, lastUsedAt) in identityRows.decode((String, String, Date, Date?).self) {
                identities.append(.init(id: id, provider: provider, createdAt: Timestamp(createdAt), lastUsedAt: lastUsedAt.map(Timestamp.init)))
            }
            return IdentityAccountRecord(
                facts: credential.facts(userIdType: userIdType), createdAt: credential.createdAt, hasPassword: hasPassword, disabledAt: credential.disabledAt,
                lastSignInAt: lastSignIn.map(Timestamp.init), verifiedAt: credential.emailVerifiedAt, factors: factors, identities: identities,
                sessionCount: sessions
            )
        }
    }
}
