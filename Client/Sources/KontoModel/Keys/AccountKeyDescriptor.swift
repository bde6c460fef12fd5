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
    /// Who may write the value; `server` keys are refused from every user-facing path.
    public let writableBy: AccountKeyWriter

    public init(
        identifier: String,
        name: String,
        category: AccountKeyCategory,
        valueType: AccountValueType,
        options: AccountKeyOptions = .default,
        rules: [ValidationRule] = [],
        isSecret: Bool = false,
        initialValue: AccountValue? = nil,
        writableBy: AccountKeyWriter = .user
    ) {
        self.identifier = identifier
        self.name = name
        self.category = category
        self.valueType = valueType
        self.options = options
        self.rules = rules
        self.isSecret = isSecret
        self.initialValue = initialValue
        self.writableBy = writableBy
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, name, category, valueType, options, rules, isSecret, initialValue, writableBy
    }

    /// `writableBy` may be absent (an encoding from before it existed): the account holder's, as before.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        identifier = try container.decode(String.self, forKey: .identifier)
        name = try container.decode(String.self, forKey: .name)
        category = try container.decode(AccountKeyCategory.self, forKey: .category)
        valueType = try container.decode(AccountValueType.self, forKey: .valueType)
        options = try container.decode(AccountKeyOptions.self, forKey: .options)
        rules = try container.decode([ValidationRule].self, forKey: .rules)
        isSecret = try container.decode(Bool.self, forKey: .isSecret)
        initialValue = try container.decodeIfPresent(AccountValue.self, forKey: .initialValue)
        writableBy = try container.decodeIfPresent(AccountKeyWriter.self, forKey: .writableBy) ?? .user
    }
}
