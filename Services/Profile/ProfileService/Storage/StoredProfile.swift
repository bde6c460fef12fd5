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

extension StoredProfile {
    /// The record with only the values of `keys` (all of them when `nil`).
    func keeping(_ keys: [String]?) -> StoredProfile {
        guard let keys else { return self }
        var kept: [String: AccountValue] = [:]
        kept.reserveCapacity(keys.count)
        for key in keys {
            kept[key] = values[key]
        }
        return StoredProfile(values: kept, version: version)
    }
}
