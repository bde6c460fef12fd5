import KontoModel

extension Fixtures {
    /// A configuration with a custom string key, a custom non-mutable key and all built-ins configured.
    static func configuration(unknownKeys: UnknownKeyPolicy = .reject) throws -> AccountConfiguration {
        let schema = try AccountKeySchema(customKeys: [
            BiographyKey.descriptor,
            AccountKeyDescriptor(identifier: "memberSince", name: "Member Since", category: .other, valueType: .date, options: [.display]),
            AccountKeyDescriptor(identifier: "plan", name: "Plan", category: .other, valueType: .enumeration(cases: ["free", "pro"])),
        ])
        return try AccountConfiguration(
            keys: [
                .requires(\.userId),
                .requires(\.password),
                .requires(\.name),
                .collects(\.email),
                .supports(\.dateOfBirth),
                .supports(\.genderIdentity),
                .supports(\.phoneNumbers),
                .requires(\.biography),
                ConfiguredKey(identifier: "memberSince", requirement: .manual),
                ConfiguredKey(identifier: "plan", requirement: .collects),
            ],
            schema: schema,
            unknownKeys: unknownKeys
        )
    }
}
