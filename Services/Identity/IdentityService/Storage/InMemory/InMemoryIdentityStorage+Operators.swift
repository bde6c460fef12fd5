import KontoContracts
import KontoModel
import Synchronization

extension InMemoryIdentityStorage {
    public func createOperatorKey(_ key: StoredOperatorKey, onlyIfNone: Bool) -> Bool {
        state.withLock { state in
            guard state.operatorKeys[key.id] == nil, !onlyIfNone || state.operatorKeys.isEmpty else { return false }
            state.operatorKeys[key.id] = key
            return true
        }
    }

    public func operatorKey(id: String) -> StoredOperatorKey? {
        state.withLock { $0.operatorKeys[id] }
    }

    public func operatorKeys() -> [StoredOperatorKey] {
        state.withLock { state in state.operatorKeys.values.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) } }
    }

    public func revokeOperatorKey(id: String, at now: Timestamp) -> OperatorKeyRevocation {
        state.withLock { state in
            guard let key = state.operatorKeys[id] else { return .notFound }
            func manages(_ key: StoredOperatorKey) -> Bool {
                key.revokedAt == nil && key.expiresAt.map { now < $0 } ?? true && key.scopes.contains(.keysWrite)
            }
            if manages(key), !state.operatorKeys.values.contains(where: { $0.id != id && manages($0) }) { return .lastKeyManager }
            if key.revokedAt == nil { state.operatorKeys[id]?.revokedAt = now }
            return .revoked
        }
    }

    public func touchOperatorKey(id: String, at now: Timestamp) {
        state.withLock { state in
            guard let key = state.operatorKeys[id] else { return }
            state.operatorKeys[id]?.lastUsedAt = max(key.lastUsedAt ?? now, now)
        }
    }

    public func searchAccounts(_ search: AccountSearch, countLimit: Int) -> AccountSearchResult {
        state.withLock { state in
            let matching = state.credentials.values.filter { credential in
                guard !credential.isPending else { return false }
                let factors = state.factors.values.contains { $0.accountId == credential.accountId && $0.demandsSecondFactor }
                let providers = Set(state.externalIdentities.values.filter { $0.accountId == credential.accountId }.map(\.provider))
                var unpaged = search
                unpaged.after = nil
                return unpaged.matches(credential, hasSecondFactor: factors, providers: providers)
            }
            let ordered = matching.sorted {
                AccountSearchPosition(createdAt: $1.createdAt, accountId: $1.accountId) < AccountSearchPosition(createdAt: $0.createdAt, accountId: $0.accountId)
            }
            let page = ordered.filter { credential in
                search.after.map { AccountSearchPosition(createdAt: credential.createdAt, accountId: credential.accountId) < $0 } ?? true
            }.prefix(search.limit)
            return AccountSearchResult(
                accounts: page.map(Self.summary), total: ordered.count, totalIsExact: true
            )
        }
    }

    public func setAccountDisabled(accountId: String, disabled: Bool, at now: Timestamp, events: [AccountEvent]) -> AccountDisabling {
        state.withLock { state in
            guard let credential = state.active(accountId) else { return .notFound }
            guard (credential.disabledAt != nil) != disabled else { return .unchanged }
            var ended = 0
            if disabled {
                ended = state.credentialChanged(accountId, keeping: nil)
                state.credentials[accountId]?.disabledAt = now
            } else {
                state.credentials[accountId]?.disabledAt = nil
            }
            state.outbox += events
            return .changed(sessionsEnded: ended)
        }
    }

    public func accountSessions(accountId: String) -> [StoredSession]? {
        state.withLock { state in
            guard let credential = state.active(accountId) else { return nil }
            return state.sessions.values.filter { $0.accountId == accountId && $0.credentialVersion == credential.credentialVersion }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    public func accountRecord(accountId: String, userIdType: UserIdType) -> IdentityAccountRecord? {
        state.withLock { state in
            guard let credential = state.active(accountId) else { return nil }
            let factors = state.factors.values.filter { $0.accountId == accountId && $0.confirmed }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
            let identities = state.externalIdentities.values.filter { $0.accountId == accountId }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
            return IdentityAccountRecord(
                facts: credential.facts(userIdType: userIdType),
                createdAt: credential.createdAt,
                hasPassword: credential.passwordHash != nil,
                disabledAt: credential.disabledAt,
                lastSignInAt: state.knownClients[accountId]?.values.max(),
                verifiedAt: credential.emailVerifiedAt,
                factors: factors.map { IdentityAccountRecord.Factor(id: $0.id, kind: $0.kind.rawValue, name: $0.name, createdAt: $0.createdAt) },
                identities: identities.map { IdentityAccountRecord.Identity(id: $0.id, provider: $0.provider, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt) },
                sessionCount: state.sessions.values.filter { $0.accountId == accountId }.count
            )
        }
    }

    static func summary(_ credential: StoredCredential) -> IdentityAccountSummary {
        IdentityAccountSummary(
            accountId: credential.accountId, userId: credential.userId, anonymous: credential.isAnonymous,
            verified: credential.emailVerifiedAt != nil || credential.verifiedEmail != nil, disabled: credential.disabledAt != nil,
            createdAt: credential.createdAt
        )
    }
}
