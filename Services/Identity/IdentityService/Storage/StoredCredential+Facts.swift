import KontoContracts
import KontoModel

extension StoredCredential {
    /// What Identity tells about the account (the session check, every sign-in answer), made here alone from what it
    /// stores: the address's verification counts where userIds are addresses, the contact address where they are
    /// usernames.
    public func facts(userIdType: UserIdType) -> IdentityAccountFacts {
        IdentityAccountFacts(
            accountId: accountId,
            userId: userId,
            isAnonymous: isAnonymous,
            emailVerified: userIdType == .emailAddress && userId != nil ? emailVerifiedAt != nil : nil,
            verifiedEmail: userIdType == .username ? verifiedEmail : nil,
            createdAt: createdAt
        )
    }
}
