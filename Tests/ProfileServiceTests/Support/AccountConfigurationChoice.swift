import KontoModel

/// The deployments the tests use, named so parameterised tests read well.
enum AccountConfigurationChoice: Sendable {
    /// Built-in keys plus `biography` (required, with a custom rule), `memberSince` (not mutable) and `plan` (enum);
    /// unknown keys rejected; any declared key supported.
    case standard
    /// Like ``standard``, but the storage supports only userId, name, email and biography.
    case exactly
    /// Like ``standard``, but unknown keys are kept.
    case keepingUnknownKeys

    func make() throws -> AccountConfiguration {
        let schema = try AccountKeySchema(customKeys: [
            AccountKeyDescriptor(
                identifier: "biography",
                name: "Biography",
                category: .personalDetails,
                valueType: .string,
                rules: [try ValidationRule(name: "noShouting", pattern: "[^A-Z]*", message: "Please do not use capital letters.", maximumLength: 1 << 20)]
            ),
            AccountKeyDescriptor(identifier: "memberSince", name: "Member Since", category: .other, valueType: .date, options: [.display]),
            AccountKeyDescriptor(identifier: "plan", name: "Plan", category: .other, valueType: .enumeration(cases: ["free", "pro"])),
        ])
        let keys: [ConfiguredKey] = [
            .requires(\.userId),
            .requires(\.password),
            .requires(\.name),
            .collects(\.email),
            .supports(\.dateOfBirth),
            .supports(\.genderIdentity),
            .supports(\.phoneNumbers),
            ConfiguredKey(identifier: "biography", requirement: .requires),
            ConfiguredKey(identifier: "memberSince", requirement: .manual),
            ConfiguredKey(identifier: "plan", requirement: .collects),
        ]
        switch self {
        case .standard:
            return try AccountConfiguration(keys: keys, schema: schema)
        case .exactly:
            return try AccountConfiguration(keys: keys, schema: schema, supportedKeys: .exactly(["userId", "name", "email", "biography"]))
        case .keepingUnknownKeys:
            return try AccountConfiguration(keys: keys, schema: schema, unknownKeys: .keep)
        }
    }
}
