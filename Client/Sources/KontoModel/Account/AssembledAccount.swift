/// An account as every caller sees it: made by KontoContracts' `AccountAssembler` alone, encoded by the gateway
/// straight from it (its `Account` schema's type override), and read by KontoClient as `KontoAccount`.
public struct AssembledAccount: Codable, Sendable, Hashable {
    public var accountId: String
    /// The version of Profile's details (what If-Match names); 0 while Profile holds none (an anonymous account).
    public var version: Int64
    public var isAnonymous: Bool
    /// Every key of the account by identifier: Profile's, the accountId, and the userId as it was given (none for an
    /// anonymous account); never a password.
    public var details: AccountDetails

    public init(accountId: String, version: Int64, isAnonymous: Bool, details: AccountDetails) {
        self.accountId = accountId
        self.version = version
        self.isAnonymous = isAnonymous
        self.details = details
    }
}
