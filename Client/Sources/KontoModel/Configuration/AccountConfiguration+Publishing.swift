/// The form `GET /v1/schema` publishes so clients can build forms:
/// `{"userIdType", "keys": [{identifier, name, category, valueType, requirement, options, rules, isSecret, initialValue?, writableBy}]}`,
/// configured keys only, in order, with the rules that are actually enforced.
extension AccountConfiguration: Encodable {
    private enum CodingKeys: String, CodingKey {
        case userIdType
        case keys
    }

    private struct PublishedKey: Encodable {
        let identifier: String
        let name: String
        let category: AccountKeyCategory
        let valueType: AccountValueType
        let requirement: AccountKeyRequirement
        let options: AccountKeyOptions
        let rules: [ValidationRule]
        let isSecret: Bool
        let initialValue: AccountValue?
        let writableBy: AccountKeyWriter
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userIdType, forKey: .userIdType)
        let published = keys.compactMap { key -> PublishedKey? in
            guard let descriptor = schema[key.identifier] else {
                return nil
            }
            return PublishedKey(
                identifier: key.identifier,
                name: descriptor.name,
                category: descriptor.category,
                valueType: descriptor.valueType,
                requirement: key.requirement,
                options: descriptor.options,
                rules: rules(for: key.identifier),
                isSecret: descriptor.isSecret,
                initialValue: descriptor.initialValue,
                writableBy: descriptor.writableBy
            )
        }
        try container.encode(published, forKey: .keys)
    }
}
