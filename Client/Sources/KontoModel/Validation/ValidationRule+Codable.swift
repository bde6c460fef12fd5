/// Rules are published with the schema as `{name, pattern, message, maxLength?}` so clients can check input early;
/// `maxLength` (UTF-8 bytes) is absent for a rule without a cap, as the built-in rules are.
extension ValidationRule: Codable {
    private enum CodingKeys: String, CodingKey {
        case name
        case pattern
        case message
        case maxLength
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let pattern = try container.decode(String.self, forKey: .pattern)
        do {
            try self.init(
                name: try container.decodeIfPresent(String.self, forKey: .name) ?? "custom",
                pattern: pattern,
                message: try container.decode(String.self, forKey: .message),
                maximumLength: try container.decodeIfPresent(Int.self, forKey: .maxLength) ?? .max
            )
        } catch let error as ValidationRuleError {
            throw DecodingError.dataCorruptedError(forKey: .pattern, in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(pattern, forKey: .pattern)
        try container.encode(message, forKey: .message)
        if maximumLength != .max {
            try container.encode(maximumLength, forKey: .maxLength)
        }
    }
}
