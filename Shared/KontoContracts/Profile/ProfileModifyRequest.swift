import KontoModel

public struct ProfileModifyRequest: Codable, Sendable, Equatable {
    public var accountId: String
    public var modifications: AccountModifications
    /// Optimistic concurrency: refuse with `account.versionConflict` unless the account is at this version.
    public var expectedVersion: Int64?

    public init(accountId: String, modifications: AccountModifications, expectedVersion: Int64? = nil) {
        self.accountId = accountId
        self.modifications = modifications
        self.expectedVersion = expectedVersion
    }
}
