import KontoModel

/// One account's record as a storage holds it.
public struct StoredProfile: Sendable, Equatable {
    public var values: [String: AccountValue]
    /// Starts at 1 and grows by one with every replace.
    public var version: Int64

    public init(values: [String: AccountValue], version: Int64) {
        self.values = values
        self.version = version
    }
}
