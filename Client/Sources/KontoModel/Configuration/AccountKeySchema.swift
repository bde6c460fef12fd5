/// Every key a deployment knows: the built-in keys, then the custom keys it declares, in order.
///
/// Built from a deployment key schema file at start (see ``AccountConfiguration/init(schemaFile:source:)``)
/// or from typed keys (`AccountKeySchema(customKeys: [BiographyKey.descriptor])`).
public struct AccountKeySchema: Sendable, Equatable {
    /// Built-in descriptors first, then custom ones in declaration order.
    public let descriptors: [AccountKeyDescriptor]
    private let positions: [String: Int]

    /// The built-in keys' descriptors.
    public static let builtInDescriptors: [AccountKeyDescriptor] = [
        AccountIdKey.descriptor,
        UserIdKey.descriptor,
        PasswordKey.descriptor,
        NameKey.descriptor,
        DateOfBirthKey.descriptor,
        GenderIdentityKey.descriptor,
        EmailKey.descriptor,
        PhoneNumbersKey.descriptor,
    ]

    /// Identifiers of the built-in keys.
    public static let builtInIdentifiers = Set(builtInDescriptors.map(\.identifier))

    /// The schema with only the built-in keys.
    public static let builtIn = AccountKeySchema(checked: builtInDescriptors)

    /// Adds custom keys to the built-in ones; refuses clashes, duplicates and malformed declarations, all at once.
    public init(customKeys: [AccountKeyDescriptor] = []) throws(AccountConfigurationError) {
        let problems = Self.problems(in: customKeys)
        guard problems.isEmpty else {
            throw AccountConfigurationError(source: "configuration", problems: problems)
        }
        self.init(checked: Self.builtInDescriptors + customKeys)
    }

    private init(checked descriptors: [AccountKeyDescriptor]) {
        self.descriptors = descriptors
        self.positions = Dictionary(uniqueKeysWithValues: descriptors.enumerated().map { ($0.element.identifier, $0.offset) })
    }

    /// The descriptor for an identifier, if the schema knows it.
    public subscript(identifier: String) -> AccountKeyDescriptor? {
        positions[identifier].map { descriptors[$0] }
    }

    public func contains(_ identifier: String) -> Bool {
        positions[identifier] != nil
    }

    /// The custom (non-built-in) descriptors, in declaration order.
    public var customDescriptors: [AccountKeyDescriptor] {
        descriptors.filter { !Self.builtInIdentifiers.contains($0.identifier) }
    }

    public static func == (lhs: AccountKeySchema, rhs: AccountKeySchema) -> Bool {
        lhs.descriptors == rhs.descriptors
    }

    private static func problems(in customKeys: [AccountKeyDescriptor]) -> [AccountConfigurationError.Problem] {
        var problems: [AccountConfigurationError.Problem] = []
        var seen: Set<String> = []
        for descriptor in customKeys {
            let identifier = descriptor.identifier
            if builtInIdentifiers.contains(identifier) {
                problems.append(.init(key: identifier, "identifier clashes with the built-in key \"\(identifier)\""))
            } else if !seen.insert(identifier).inserted {
                problems.append(.init(key: identifier, "duplicate identifier"))
            }
            problems += descriptorProblems(descriptor)
        }
        return problems
    }

    /// Problems of one declaration taken alone; shared with the schema file builder.
    static func descriptorProblems(_ descriptor: AccountKeyDescriptor) -> [AccountConfigurationError.Problem] {
        let identifier = descriptor.identifier
        var problems: [AccountConfigurationError.Problem] = []
        if !isValidIdentifier(identifier) {
            problems.append(.init(key: identifier, "invalid identifier (use a letter, then letters, digits or _)"))
        }
        if descriptor.name.allSatisfy(\.isWhitespace) {
            problems.append(.init(key: identifier, "empty name"))
        }
        if case let .enumeration(cases) = descriptor.valueType {
            if cases.isEmpty {
                problems.append(.init(key: identifier, "enum without cases (give at least one in \"cases\")"))
            }
            var seenCases: Set<String> = []
            for duplicate in cases where !seenCases.insert(duplicate).inserted {
                problems.append(.init(key: identifier, "duplicate enum case \"\(duplicate)\""))
            }
        }
        if !descriptor.rules.isEmpty, descriptor.valueType != .string, descriptor.valueType != .stringList {
            problems.append(.init(key: identifier, "rules apply only to string and stringList keys, not \(descriptor.valueType.name)"))
        }
        return problems
    }

    /// Identifiers appear in JSON, SQL column values and URLs, so they stay plain.
    static func isValidIdentifier(_ identifier: String) -> Bool {
        func isLetter(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
        }
        guard let first = identifier.unicodeScalars.first, isLetter(first) else {
            return false
        }
        return identifier.unicodeScalars.allSatisfy { isLetter($0) || ("0"..."9").contains($0) || $0 == "_" }
    }
}

/// Encoded as the list of descriptors, so services can pass a schema on.
extension AccountKeySchema: Codable {
    /// Built-in descriptors come from this library, not the wire; the custom ones are checked as usual.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let descriptors = try container.decode([AccountKeyDescriptor].self)
        do {
            try self.init(customKeys: descriptors.filter { !Self.builtInIdentifiers.contains($0.identifier) })
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(descriptors)
    }
}
