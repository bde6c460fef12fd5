/// How a deployment uses accounts: userId type, configured keys in order, key schema, supported keys and the
/// unknown-key policy. Built once at start; invalid configurations are refused with every problem named.
public struct AccountConfiguration: Sendable, Equatable {
    public let userIdType: UserIdType
    /// The configured keys in display order.
    public let keys: [ConfiguredKey]
    public let schema: AccountKeySchema
    /// What the primary storage holds; other keys go to an external storage provider.
    public let supportedKeys: SupportedKeys
    public let unknownKeys: UnknownKeyPolicy
    private let positions: [String: Int]

    /// Checks that every configured key is declared once, `userId` is required and `accountId` is left implicit.
    public init(
        userIdType: UserIdType = .emailAddress,
        keys: [ConfiguredKey],
        schema: AccountKeySchema = .builtIn,
        supportedKeys: SupportedKeys = .arbitrary,
        unknownKeys: UnknownKeyPolicy = .reject
    ) throws(AccountConfigurationError) {
        var problems: [AccountConfigurationError.Problem] = []
        var positions: [String: Int] = [:]
        for (position, key) in keys.enumerated() {
            let identifier = key.identifier
            if positions[identifier] != nil {
                problems.append(.init(key: identifier, "duplicate identifier"))
                continue
            }
            positions[identifier] = position
            if identifier == AccountIdKey.identifier {
                problems.append(.init(key: identifier, "accountId is always present and cannot be configured"))
            } else if let descriptor = schema[identifier] {
                if key.rules?.isEmpty == false, descriptor.valueType != .string, descriptor.valueType != .stringList {
                    problems.append(.init(key: identifier, "rules apply only to string and stringList keys, not \(descriptor.valueType.name)"))
                }
            } else {
                problems.append(.init(key: identifier, "configured key is not declared (declare it with a type, or use a built-in key)"))
            }
        }
        if let userId = positions[UserIdKey.identifier] {
            if keys[userId].requirement != .requires {
                problems.append(.init(key: UserIdKey.identifier, "userId must have requirement requires, not \(keys[userId].requirement.rawValue)"))
            }
        } else {
            problems.append(.init(key: UserIdKey.identifier, "userId must be configured with requirement requires"))
        }
        if case let .exactly(identifiers) = supportedKeys {
            for identifier in identifiers.sorted() where !schema.contains(identifier) {
                problems.append(.init(key: identifier, "supported key is not declared"))
            }
        }
        guard problems.isEmpty else {
            throw AccountConfigurationError(source: "configuration", problems: problems)
        }
        self.userIdType = userIdType
        self.keys = keys
        self.schema = schema
        self.supportedKeys = supportedKeys
        self.unknownKeys = unknownKeys
        self.positions = positions
    }

    /// SpeziAccount's default (`AccountValueConfiguration.default`): email login with userId, password and name
    /// required, date of birth and gender identity collected. An app built on SpeziAccount's defaults meets a
    /// Konto started without a schema file with the same keys; `deploy/examples/accounts.email-name.yaml` keeps
    /// the lighter choice Konto used to build in (name optional, email and phone numbers too).
    public static let `default`: AccountConfiguration = {
        do {
            return try AccountConfiguration(keys: [
                .requires(\.userId),
                .requires(\.password),
                .requires(\.name),
                .collects(\.dateOfBirth),
                .collects(\.genderIdentity),
            ])
        } catch {
            fatalError("The default configuration is invalid: \(error)")
        }
    }()

    /// The configured key for an identifier, if configured.
    public func configuredKey(for identifier: String) -> ConfiguredKey? {
        positions[identifier].map { keys[$0] }
    }

    /// The requirement of a configured key.
    public func requirement(for identifier: String) -> AccountKeyRequirement? {
        configuredKey(for: identifier)?.requirement
    }

    /// Identifiers of the `requires` keys, in order.
    public var requiredIdentifiers: [String] {
        keys.filter { $0.requirement == .requires }.map(\.identifier)
    }

    /// The rules a value of this key is checked against.
    ///
    /// The configured key's rules replace the key's own; a userId gets ``ValidationRule/minimalEmail`` when it is an
    /// email address; a required string key without rules gets ``ValidationRule/nonEmpty``.
    public func rules(for identifier: String) -> [ValidationRule] {
        guard let descriptor = schema[identifier] else {
            return []
        }
        let configured = configuredKey(for: identifier)
        var rules = configured?.rules ?? descriptor.rules
        if configured?.rules == nil, identifier == UserIdKey.identifier, userIdType == .emailAddress {
            rules = [.minimalEmail]
        }
        if rules.isEmpty, configured?.requirement == .requires, descriptor.valueType == .string {
            rules = [.nonEmpty]
        }
        return rules
    }
}
