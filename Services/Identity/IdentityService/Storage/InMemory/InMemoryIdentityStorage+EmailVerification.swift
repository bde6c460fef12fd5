import KontoContracts
import KontoModel
import Synchronization

extension InMemoryIdentityStorage {
    public func createEmailVerification(
        tokenHash: [UInt8], codeDigest: [UInt8]?, accountId: String, address: String, isUserId: Bool, expiresAt: Timestamp, events: [AccountEvent]
    ) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard let credential = state.active(accountId), !isUserId || credential.userId == address else { throw IdentityStorageError(.notFound) }
            state.emailVerifications[tokenHash] = EmailVerification(codeDigest: codeDigest, accountId: accountId, address: address, isUserId: isUserId, expiresAt: expiresAt)
            state.outbox += events
        }
    }

    public func pendingEmailVerifications(accountId: String, at now: Timestamp) -> [IdentityAccountExport.PendingVerification] {
        state.withLock { state in
            state.emailVerifications.values.filter { $0.accountId == accountId && now < $0.expiresAt }
                .sorted { ($0.expiresAt, $0.address) < ($1.expiresAt, $1.address) }
                .map { IdentityAccountExport.PendingVerification(address: $0.address, expiresAt: $0.expiresAt) }
        }
    }

    public func confirmEmailVerification(tokenHash: [UInt8], accountId: String?, at now: Timestamp, events: @escaping @Sendable (String) -> [AccountEvent]) -> String? {
        state.withLock { state in
            guard let found = state.emailVerifications[tokenHash], accountId.map({ $0 == found.accountId }) ?? true,
                  let token = state.emailVerifications.removeValue(forKey: tokenHash)
            else { return nil }
            return Self.verify(token, at: now, in: &state, events: events)
        }
    }

    public func confirmEmailVerification(accountId: String, codeDigest: [UInt8], at now: Timestamp, events: [AccountEvent]) -> Bool {
        state.withLock { state in
            guard let key = state.emailVerifications.first(where: { $0.value.accountId == accountId && $0.value.codeDigest == codeDigest })?.key,
                  let token = state.emailVerifications.removeValue(forKey: key)
            else { return false }
            return Self.verify(token, at: now, in: &state) { _ in events } != nil
        }
    }

    /// Verifies what a used token or code was for, if it has not expired and its address is still the account's.
    private static func verify(_ token: EmailVerification, at now: Timestamp, in state: inout State, events: (String) -> [AccountEvent]) -> String? {
        guard now < token.expiresAt, let credential = state.active(token.accountId), !token.isUserId || credential.userId == token.address else { return nil }
        if token.isUserId {
            state.credentials[token.accountId]?.emailVerifiedAt = now
        } else {
            state.credentials[token.accountId]?.verifiedEmail = token.address
        }
        state.outbox += events(token.accountId)
        return token.accountId
    }

    public func verifyAddress(accountId: String, at now: Timestamp, events: [AccountEvent]) -> Bool {
        state.withLock { state in
            guard let credential = state.active(accountId), credential.userId != nil, credential.emailVerifiedAt == nil else { return false }
            state.credentials[accountId]?.emailVerifiedAt = now
            if state.provenAt[accountId] == nil { state.provenAt[accountId] = now }
            state.outbox += events
            return true
        }
    }
}
