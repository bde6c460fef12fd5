import KontoModel
import Synchronization

extension InMemoryIdentityStorage {
    public func factors(accountId: String) -> [StoredFactor] {
        state.withLock { state in
            state.factors.values.filter { $0.accountId == accountId }
                .map { factor in
                    var factor = factor
                    if factor.kind == .recoveryCodes {
                        factor.remaining = state.recoveryCodes[factor.id]?.values.filter { $0 == nil }.count ?? 0
                    }
                    return factor
                }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    public func addPendingFactor(_ factor: StoredFactor) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.active(factor.accountId) != nil else { throw IdentityStorageError(.notFound) }
            for pending in state.factors.values where pending.accountId == factor.accountId && !pending.confirmed {
                state.factors[pending.id] = nil
            }
            var stored = factor
            stored.confirmed = false
            state.factors[factor.id] = stored
        }
    }

    public func confirmFactor(accountId: String, factorId: String, step: Int64, at now: Timestamp, events: [AccountEvent]) -> Bool {
        state.withLock { state in
            guard let factor = state.factors[factorId], factor.accountId == accountId, !factor.confirmed else { return false }
            state.factors[factorId]?.confirmed = true
            state.factors[factorId]?.lastUsedStep = step
            state.factors[factorId]?.lastUsedAt = now
            state.outbox += events
            return true
        }
    }

    public func useFactorStep(accountId: String, factorId: String, step: Int64, at now: Timestamp) -> Bool {
        state.withLock { state in
            guard let factor = state.factors[factorId], factor.accountId == accountId, factor.confirmed,
                  factor.lastUsedStep.map({ $0 < step }) ?? true
            else { return false }
            state.factors[factorId]?.lastUsedStep = step
            state.factors[factorId]?.lastUsedAt = now
            state.factorAnswers[accountId] = nil
            return true
        }
    }

    public func removeFactor(
        accountId: String,
        factorId: String,
        events: @escaping @Sendable (StoredFactor.Kind, Int) -> [AccountEvent]
    ) -> (kind: StoredFactor.Kind, remaining: Int)? {
        state.withLock { state in
            guard let factor = state.factors[factorId], factor.accountId == accountId else { return nil }
            state.factors[factorId] = nil
            state.recoveryCodes[factorId] = nil
            let remaining = state.factors.values.filter { $0.accountId == accountId && $0.demandsSecondFactor }.count
            // A pending enrolment was never announced: its removal is not either.
            if factor.confirmed { state.outbox += events(factor.kind, remaining) }
            return (factor.kind, remaining)
        }
    }

    public func replaceRecoveryCodes(_ factor: StoredFactor, codeHashes: [[UInt8]], events: [AccountEvent]) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.active(factor.accountId) != nil else { throw IdentityStorageError(.notFound) }
            for old in state.factors.values where old.accountId == factor.accountId && old.kind == .recoveryCodes {
                state.factors[old.id] = nil
                state.recoveryCodes[old.id] = nil
            }
            state.factors[factor.id] = factor
            state.recoveryCodes[factor.id] = Dictionary(uniqueKeysWithValues: codeHashes.map { ($0, Timestamp?.none) })
            state.outbox += events
        }
    }

    public func useRecoveryCode(
        accountId: String,
        codeHash: [UInt8],
        at now: Timestamp,
        events: @escaping @Sendable (Int) -> [AccountEvent]
    ) -> Int? {
        state.withLock { state in
            guard let factor = state.factors.values.first(where: { $0.accountId == accountId && $0.kind == .recoveryCodes }),
                  case .some(.none) = state.recoveryCodes[factor.id]?[codeHash]
            else { return nil }
            state.recoveryCodes[factor.id]?[codeHash] = .some(now)
            state.factors[factor.id]?.lastUsedAt = now
            let remaining = state.recoveryCodes[factor.id]?.values.filter { $0 == nil }.count ?? 0
            state.outbox += events(remaining)
            return remaining
        }
    }

    public func addPasskey(_ factor: StoredFactor, events: [AccountEvent]) throws(IdentityStorageError) -> Bool {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.active(factor.accountId) != nil else { throw IdentityStorageError(.notFound) }
            guard !state.factors.values.contains(where: { $0.credentialId != nil && $0.credentialId == factor.credentialId }) else { return false }
            var stored = factor
            stored.confirmed = true
            state.factors[factor.id] = stored
            state.outbox += events
            return true
        }
    }

    public func passkey(credentialId: [UInt8]) -> StoredFactor? {
        state.withLock { state in
            state.factors.values.first { $0.kind == .passkey && $0.credentialId == credentialId }
        }
    }

    public func usePasskey(accountId: String, factorId: String, signCount: Int64, newSignCount: Int64, at now: Timestamp) -> Bool {
        state.withLock { state in
            guard let factor = state.factors[factorId], factor.accountId == accountId, factor.kind == .passkey,
                  factor.signCount == signCount
            else { return false }
            state.factors[factorId]?.signCount = newSignCount
            state.factors[factorId]?.lastUsedAt = now
            return true
        }
    }

    public func consumePasskeyChallenge(hash: [UInt8], expiresAt: Timestamp) -> Bool {
        state.withLock { state in
            state.usedPasskeyChallenges.updateValue(expiresAt, forKey: hash) == nil
        }
    }

    public func createChallenge(_ challenge: StoredChallenge) {
        state.withLock { $0.challenges[challenge.tokenHash] = challenge }
    }

    public func answerChallenge(tokenHash: [UInt8], at now: Timestamp, allowing: Int) -> StoredChallenge? {
        state.withLock { state in
            guard let challenge = state.challenges[tokenHash], now < challenge.expiresAt else { return nil }
            let taken = state.challengeAnswers[tokenHash, default: 0]
            guard taken < allowing else { return nil }
            state.challengeAnswers[tokenHash] = taken + 1
            return challenge
        }
    }

    public func countFactorAnswer(accountId: String) -> Int? {
        state.withLock { state in
            guard state.active(accountId) != nil else { return nil }
            let count = state.factorAnswers[accountId, default: 0]
            state.factorAnswers[accountId] = count + 1
            return count + 1
        }
    }

    public func factorAnswers(accountId: String) -> Int {
        state.withLock { $0.factorAnswers[accountId, default: 0] }
    }

    public func clearFactorAnswers(accountId: String) {
        state.withLock { _ = $0.factorAnswers.removeValue(forKey: accountId) }
    }

    public func appendEvents(_ events: [AccountEvent]) {
        state.withLock { $0.outbox += events }
    }

    public func completeChallenge(tokenHash: [UInt8], at now: Timestamp, session: StoredSession, events: [AccountEvent]) throws(IdentityStorageError) -> Bool {
        try state.withLock { state throws(IdentityStorageError) in
            guard let challenge = state.challenges[tokenHash], now < challenge.expiresAt, challenge.accountId == session.accountId else {
                return false
            }
            guard state.active(session.accountId)?.credentialVersion == session.credentialVersion else {
                throw IdentityStorageError(.notFound)
            }
            state.challenges[tokenHash] = nil
            state.challengeAnswers[tokenHash] = nil
            state.insert(session)
            state.outbox += events
            return true
        }
    }
}
