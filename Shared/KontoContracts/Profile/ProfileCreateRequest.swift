import KontoModel

public struct ProfileCreateRequest: Codable, Sendable, Equatable {
    public var accountId: String
    /// Non-credential keys only; Profile refuses a password.
    public var details: AccountDetails

    public init(accountId: String, details: AccountDetails) {
        self.accountId = accountId
        self.details = details
    }
}
