public struct ProfileLoadRequest: Codable, Sendable, Equatable {
    public var accountId: String
    /// The identifiers to load; `nil` loads every stored key.
    public var keys: [String]?

    public init(accountId: String, keys: [String]? = nil) {
        self.accountId = accountId
        self.keys = keys
    }
}
