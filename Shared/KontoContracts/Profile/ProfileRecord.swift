import KontoModel

/// An account's stored details and the version they are at.
public struct ProfileRecord: Codable, Sendable, Equatable {
    public var accountId: String
    public var details: AccountDetails
    /// Starts at 1 and grows by one with every change.
    public var version: Int64

    public init(accountId: String, details: AccountDetails, version: Int64) {
        self.accountId = accountId
        self.details = details
        self.version = version
    }
}
