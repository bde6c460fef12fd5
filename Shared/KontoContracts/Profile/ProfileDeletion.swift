public struct ProfileDeletion: Codable, Sendable, Equatable {
    public var accountId: String
    /// Whether there was anything to delete; false for an unknown or already deleted account.
    public var deleted: Bool

    public init(accountId: String, deleted: Bool) {
        self.accountId = accountId
        self.deleted = deleted
    }
}
