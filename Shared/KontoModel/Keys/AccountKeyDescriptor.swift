/// What services know about a key without its Swift type: built-in keys and schema-declared custom keys alike.
public struct AccountKeyDescriptor: Sendable, Equatable, Codable {
    public let identifier: String
    public let name: String
    public let category: AccountKeyCategory
    public let valueType: AccountValueType
    public let options: AccountKeyOptions
    /// Rules the key carries wherever it is configured.
    public let rules: [ValidationRule]
    public let isSecret: Bool
    /// The value a signup form starts with, if any.
    public let initialValue: AccountValue?

    public init(
        identifier: String,
        name: String,
        category: AccountKeyCategory,
        valueType: AccountValueType,
        options: AccountKeyOptions = .default,
        rules: [ValidationRule] = [],
        isSecret: Bool = false,
        initialValue: AccountValue? = nil
    ) {
        self.identifier = identifier
        self.name = name
        self.category = category
        self.valueType = valueType
        self.options = options
        self.rules = rules
        self.isSecret = isSecret
        self.initialValue = initialValue
    }
}
