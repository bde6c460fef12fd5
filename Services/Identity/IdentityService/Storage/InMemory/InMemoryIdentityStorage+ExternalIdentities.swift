import KontoModel
import Synchronization

extension InMemoryIdentityStorage {
    public func externalIdentity(provider: String, subject: String) -> (identity: StoredExternalIdentity, credential: StoredCredential)? {
        state.withLock { state in
            guard let identity = state.externalIdentities.values.first(where: { $0.provider == provider && $0.subject == subject }),
                  let credential = state.active(identity.accountId)
            else { return nil }
            return (identity, credential)
        }
    }

    public func externalIdentities(accountId: String) -> [StoredExternalIdentity] {
        state.withLock { state in
            state.externalIdentities.values.filter { $0.accountId == accountId }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    public func addExternalIdentity(_ identity: StoredExternalIdentity, events: [AccountEvent]) throws(IdentityStorageError) -> Bool {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.credentials[identity.accountId] != nil else { throw IdentityStorageError(.notFound) }
            guard !state.externalIdentities.values.contains(where: { $0.provider == identity.provider && $0.subject == identity.subject }) else { return false }
            state.externalIdentities[identity.id] = identity
            state.outbox += events
            return true
        }
    }

    public func removeExternalIdentity(accountId: String, identityId: String, keepingWayIn: Bool, events: [AccountEvent]) -> ExternalIdentityRemoval {
        state.withLock { state in
            guard let identity = state.externalIdentities[identityId], identity.accountId == accountId, let credential = state.active(accountId) else {
                return .notFound
            }
            let others = state.externalIdentities.values.filter { $0.accountId == accountId && $0.id != identityId }.count
            if keepingWayIn, credential.passwordHash == nil, others == 0 { return .lastSignInMethod }
            state.externalIdentities[identityId] = nil
            if let sealed = identity.sealedRefreshToken {
                let revocation = StoredRevocation(id: identity.id, provider: identity.provider, accountId: accountId, identityId: identity.id, sealedToken: sealed)
                state.revocations[revocation.id] = Revocation(revocation: revocation, nextAttemptAt: Timestamp(milliseconds: 0))
            }
            state.outbox += events
            return .removed(identity)
        }
    }

    public func touchExternalIdentity(id: String, email: String?, emailVerified: Bool, at now: Timestamp, sealedRefreshToken: [UInt8]?) {
        state.withLock { state in
            guard state.externalIdentities[id] != nil else { return }
            state.externalIdentities[id]?.lastUsedAt = now
            state.externalIdentities[id]?.email = email
            state.externalIdentities[id]?.emailVerified = emailVerified
            if let sealedRefreshToken {
                state.externalIdentities[id]?.sealedRefreshToken = sealedRefreshToken
            }
        }
    }

    public func useNonce(digest: [UInt8], expiresAt: Timestamp) -> Bool {
        state.withLock { state in
            guard state.usedNonces[digest] == nil else { return false }
            state.usedNonces[digest] = expiresAt
            return true
        }
    }

    public func dueRevocations(at now: Timestamp, leaseUntil: Timestamp, limit: Int) -> [StoredRevocation] {
        state.withLock { state in
            let due = state.revocations.values.filter { !$0.dead && $0.nextAttemptAt <= now }
                .sorted { ($0.nextAttemptAt, $0.revocation.id) < ($1.nextAttemptAt, $1.revocation.id) }
                .prefix(limit)
            for entry in due {
                state.revocations[entry.revocation.id]?.nextAttemptAt = leaseUntil
            }
            return due.map(\.revocation)
        }
    }

    public func finishRevocation(id: String) {
        state.withLock { state in state.revocations[id] = nil }
    }

    public func failRevocation(id: String, attempts: Int, retryAt: Timestamp?, at now: Timestamp) {
        state.withLock { state in
            guard state.revocations[id] != nil else { return }
            state.revocations[id]?.revocation.attempts = attempts
            // A dead one keeps when it was given up in nextAttemptAt, which nothing reads for it otherwise.
            state.revocations[id]?.nextAttemptAt = retryAt ?? now
            if retryAt == nil { state.revocations[id]?.dead = true }
        }
    }

    public func pruneDeadRevocations(givenUpBefore cutoff: Timestamp) -> Int {
        state.withLock { state in
            let gone = state.revocations.values.filter { $0.dead && $0.nextAttemptAt < cutoff }.map(\.revocation.id)
            for id in gone { state.revocations[id] = nil }
            return gone.count
        }
    }

    public func deadRevocations() -> [StoredRevocation] {
        state.withLock { state in state.revocations.values.filter(\.dead).map(\.revocation).sorted { $0.id < $1.id } }
    }
}
