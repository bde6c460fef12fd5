import KontoModel
import Synchronization

extension InMemoryIdentityStorage {
    public func createEmailCode(accountId: String, codeDigest: [UInt8], credentialVersion: Int64, expiresAt: Timestamp, events: [AccountEvent]) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard let credential = state.active(accountId), credential.credentialVersion == credentialVersion else { throw IdentityStorageError(.notFound) }
            state.emailCodes[codeDigest] = EmailCode(accountId: accountId, credentialVersion: credentialVersion, expiresAt: expiresAt)
            state.outbox += events
        }
    }

    public func useEmailCode(
        accountId: String, codeDigest: [UInt8], at now: Timestamp, events: @escaping @Sendable (Bool) -> [AccountEvent]
    ) -> UsedEmailCode? {
        state.withLock { state in
            guard let code = state.emailCodes[codeDigest], code.accountId == accountId, now < code.expiresAt,
                  let credential = state.active(accountId), credential.credentialVersion == code.credentialVersion
            else { return nil }
            state.emailCodes = state.emailCodes.filter { $0.value.accountId != accountId }
            let newlyVerified = credential.emailVerifiedAt == nil
            if newlyVerified {
                state.credentials[accountId]?.emailVerifiedAt = now
            }
            state.outbox += events(newlyVerified)
            return UsedEmailCode(credentialVersion: credential.credentialVersion, expiresAt: code.expiresAt)
        }
    }
}
