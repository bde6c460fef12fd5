/// A key the deployment uses, in display order, with its requirement.
public struct ConfiguredKey: Sendable, Equatable, Codable {
    public let identifier: String
    public let requirement: AccountKeyRequirement
    /// Rules replacing the key's own rules, if given.
    public let rules: [ValidationRule]?

    public init(identifier: String, requirement: AccountKeyRequirement, rules: [ValidationRule]? = nil) {
        self.identifier = identifier
        self.requirement = requirement
        self.rules = rules
    }

    /// `.requires(\.userId)`.
    public static func requires<Key: AccountKey>(_ key: KeyPath<AccountKeys, Key.Type>, rules: [ValidationRule]? = nil) -> ConfiguredKey {
        ConfiguredKey(identifier: Key.identifier, requirement: .requires, rules: rules)
    }

    /// `.collects(\.name)`.
    public static func collects<Key: AccountKey>(_ key: KeyPath<AccountKeys, Key.Type>, rules: [ValidationRule]? = nil) -> ConfiguredKey {
        ConfiguredKey(identifier: Key.identifier, requirement: .collects, rules: rules)
    }

    /// `.supports(\.phoneNumbers)`.
    public static func supports<Key: AccountKey>(_ key: KeyPath<AccountKeys, Key.Type>, rules: [ValidationRule]? = nil) -> ConfiguredKey {
        ConfiguredKey(identifier: Key.identifier, requirement: .supports, rules: rules)
    }

    /// `.manual(\.dateOfBirth)`.
    public static func manual<Key: AccountKey>(_ key: KeyPath<AccountKeys, Key.Type>, rules: [ValidationRule]? = nil) -> ConfiguredKey {
        ConfiguredKey(identifier: Key.identifier, requirement: .manual, rules: rules)
    }
}
