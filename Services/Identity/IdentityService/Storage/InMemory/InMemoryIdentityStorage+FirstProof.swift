import KontoModel
import Synchronization

extension InMemoryIdentityStorage {
    public func recordOwnersProof(accountId: String, at now: Timestamp) -> Bool {
        state.withLock { state in
            guard let credential = state.active(accountId), state.provenAt[accountId] == nil,
                  credential.emailVerifiedAt.map({ $0 > credential.createdAt }) ?? true
            else { return false }
            state.provenAt[accountId] = now
            return true
        }
    }

    public func endAccessBeforeFirstProof(
        accountId: String, keeping: String?, keepingPassword: Bool, at now: Timestamp, events: @escaping @Sendable (AccessEnded) -> [AccountEvent]
    ) -> AccessEnded? {
        state.withLock { state in
            guard let credential = state.active(accountId), state.provenAt[accountId] == nil,
                  credential.emailVerifiedAt.map({ $0 > credential.createdAt }) ?? true
            else { return nil }
            state.provenAt[accountId] = now
            let hadPassword = credential.passwordHash != nil
            if !keepingPassword { state.credentials[accountId]?.passwordHash = nil }
            let sessions = state.credentialChanged(accountId, keeping: keeping)
            state.challenges = state.challenges.filter { $0.value.accountId != accountId }
            state.challengeAnswers = state.challengeAnswers.filter { state.challenges[$0.key] != nil }
            let factors = state.factors.values.filter { $0.accountId == accountId }.sorted { $0.id < $1.id }
            for factor in factors {
                state.factors[factor.id] = nil
                state.recoveryCodes[factor.id] = nil
            }
            let identities = state.externalIdentities.values.filter { $0.accountId == accountId }.sorted { $0.id < $1.id }
            for identity in identities {
                state.externalIdentities[identity.id] = nil
                if let sealed = identity.sealedRefreshToken {
                    let revocation = StoredRevocation(id: identity.id, provider: identity.provider, accountId: accountId, identityId: identity.id, sealedToken: sealed)
                    state.revocations[revocation.id] = Revocation(revocation: revocation, nextAttemptAt: Timestamp(milliseconds: 0))
                }
            }
            var applications = Set((state.oidcConsents.removeValue(forKey: accountId) ?? [:]).keys)
            for grant in state.oidcGrants.values where grant.accountId == accountId {
                applications.insert(grant.clientId)
                _ = state.removeGrant(grant.id)
            }
            for (hash, stored) in state.oidcCodes where stored.code.accountId == accountId {
                applications.insert(stored.code.clientId)
                state.oidcCodes[hash] = nil
            }
            let mailRestored = state.mailOptOuts.removeValue(forKey: accountId)?.isEmpty == false
            let ended = AccessEnded(
                sessions: sessions, passwordRemoved: hadPassword && !keepingPassword,
                factors: factors.map { ($0.id, $0.kind) }, identities: identities.map { ($0.id, $0.provider) },
                applications: applications.sorted(), mailPreferencesRestored: mailRestored
            )
            state.outbox += events(ended)
            return ended
        }
    }
}
