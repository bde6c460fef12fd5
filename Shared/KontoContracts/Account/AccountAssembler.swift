import KontoModel

/// The one place an account is put together from what its two owners hold: Profile's stored details and their
/// version, and what Identity keeps (``IdentityAccountFacts``).
///
/// Sign-up, anonymous sign-in and login (in Identity), `GET` and `PATCH /v1/account` (in the gateway) and the web
/// console (through the gateway's handlers) all answer with what it makes; a key added to the answer is added here.
/// It lives beside the contracts because both services use it and neither may import the other.
public struct AccountAssembler: Sendable {
    public let userIdType: UserIdType

    public init(userIdType: UserIdType) {
        self.userIdType = userIdType
    }

    public init(configuration: AccountConfiguration) {
        self.init(userIdType: configuration.userIdType)
    }

    /// - Parameters:
    ///   - facts: Identity's: the userId as it was given (none for an anonymous account), whether the address was
    ///     confirmed, and where userIds are usernames the contact address last confirmed. The account's `email` is
    ///     verified while it is that address (compared without case), so a changed address is unverified without anyone
    ///     having to notice the change.
    ///   - profile: what Profile holds, or nil when it holds nothing (an anonymous account before its sign-up).
    public func account(_ facts: IdentityAccountFacts, profile: ProfileRecord?) -> AssembledAccount {
        var values = profile?.details.storedValues ?? [:]
        values[AccountIdKey.identifier] = .string(facts.accountId)
        values[UserIdKey.identifier] = facts.userId.map(AccountValue.string)
        // Identity's alone, whatever Profile holds under the name.
        var verified = facts.emailVerified
        if verified == nil, userIdType == .username, !facts.isAnonymous, case let .string(email)? = values[EmailKey.identifier] {
            verified = facts.verifiedEmail.map { $0.lowercased() == email.lowercased() } ?? false
        }
        values[EmailVerifiedKey.identifier] = verified.map(AccountValue.bool)
        values[CreatedAtKey.identifier] = facts.createdAt.map { .string($0.description) }
        // Profile never stores one; none is ever shown even so.
        values[PasswordKey.identifier] = nil
        return AssembledAccount(
            accountId: facts.accountId,
            version: profile?.version ?? 0,
            isAnonymous: facts.isAnonymous,
            details: AccountDetails(values: values, userIdType: userIdType)
        )
    }
}
