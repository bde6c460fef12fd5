/// A change to an account's details, applied atomically: `{"set": {identifier: value}, "remove": [identifier]}`.
public struct AccountModifications: Sendable, Equatable {
    /// Values to add or replace.
    public var set: AccountDetails
    /// Identifiers whose values are removed.
    public var remove: Set<String>

    public init(set: AccountDetails = AccountDetails(), remove: Set<String> = []) {
        self.set = set
        self.remove = remove
    }

    /// Marks a typed key for removal: `modifications.remove(\.phoneNumbers)`.
    public mutating func remove<Key: AccountKey>(_ key: KeyPath<AccountKeys, Key.Type>) {
        remove.insert(Key.identifier)
    }

    public var isEmpty: Bool {
        self.set.isEmpty && remove.isEmpty
    }
}

extension AccountModifications: Codable {
    private enum CodingKeys: String, CodingKey {
        case set
        case remove
    }

    /// Either part may be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        set = try container.decodeIfPresent(AccountDetails.self, forKey: .set) ?? AccountDetails()
        remove = Set(try container.decodeIfPresent([String].self, forKey: .remove) ?? [])
    }

    /// `set` follows ``AccountDetails``' secret handling; `remove` is sorted so encodings are stable.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(set, forKey: .set)
        try container.encode(remove.sorted(), forKey: .remove)
    }
}

extension AccountModifications: CustomStringConvertible {
    public var description: String {
        "AccountModifications(set: \(set), remove: \(remove.sorted()))"
    }
}
