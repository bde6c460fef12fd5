public struct ProfileDeleteRequest: Codable, Sendable, Equatable {
    public var accountId: String

    public init(accountId: String) {
        self.accountId = accountId
    }
}
