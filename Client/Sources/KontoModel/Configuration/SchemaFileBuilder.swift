/// Turns the raw file into checked parts, collecting every problem instead of stopping at the first.
struct SchemaFileBuilder {
    typealias Problem = AccountConfigurationError.Problem

    var problems: [Problem] = []
    var customKeys: [AccountKeyDescriptor] = []
    var configuredKeys: [ConfiguredKey] = []
    var userIdType: UserIdType = .emailAddress
    var unknownKeys: UnknownKeyPolicy = .reject
    var supportedKeys: SupportedKeys = .arbitrary
    /// Identifiers whose entries had problems and were left out.
    var refusedIdentifiers: Set<String> = []

    private static let typeNames: [String: AccountValueType] = [
        "string": .string, "bool": .bool, "integer": .integer, "double": .double, "date": .date,
        "stringList": .stringList, "[string]": .stringList,
    ]

    mutating func read(_ file: AccountSchemaFile) {
        for field in file.unknownFields {
            problems.append(Problem(key: nil, "unknown field \"\(field)\""))
        }
        if let name = file.userIdType {
            if let type = UserIdType(rawValue: name) {
                userIdType = type
            } else {
                problems.append(Problem(key: nil, "unknown userIdType \"\(name)\" (expected one of \(Self.list(UserIdType.allCases)))"))
            }
        }
        if let name = file.unknownKeys {
            if let policy = UnknownKeyPolicy(rawValue: name) {
                unknownKeys = policy
            } else {
                problems.append(Problem(key: nil, "unknown unknownKeys policy \"\(name)\" (expected one of \(Self.list(UnknownKeyPolicy.allCases)))"))
            }
        }
        switch file.supportedKeys {
        case nil, .name("arbitrary"): supportedKeys = .arbitrary
        case let .name(name): problems.append(Problem(key: nil, "unknown supportedKeys \"\(name)\" (expected arbitrary or a list of identifiers)"))
        case let .identifiers(identifiers): supportedKeys = .exactly(Set(identifiers))
        }
        var seen: Set<String> = []
        for (index, entry) in file.keys.enumerated() {
            guard let identifier = entry.identifier else {
                problems.append(Problem(key: nil, "keys[\(index)]: missing identifier"))
                continue
            }
            guard seen.insert(identifier).inserted else {
                problems.append(Problem(key: identifier, "duplicate identifier"))
                continue
            }
            let before = problems.count
            read(entry, identifier: identifier)
            if problems.count > before {
                refusedIdentifiers.insert(identifier)
            }
        }
    }

    private mutating func read(_ entry: AccountSchemaFile.KeyEntry, identifier: String) {
        var entryProblems: [Problem] = entry.unknownFields.map { Problem(key: identifier, "unknown field \"\($0)\"") }
        func refuse(_ message: String) {
            entryProblems.append(Problem(key: identifier, message))
        }

        var requirement: AccountKeyRequirement?
        switch entry.requirement {
        case nil: refuse("missing requirement (expected one of \(Self.list(AccountKeyRequirement.allCases)))")
        case let name?:
            requirement = AccountKeyRequirement(rawValue: name)
            if requirement == nil {
                refuse("unknown requirement \"\(name)\" (expected one of \(Self.list(AccountKeyRequirement.allCases)))")
            }
        }
        let rules = entry.rules.map { $0.compactMap { rule($0, refuse: refuse) } }

        if AccountKeySchema.builtInIdentifiers.contains(identifier) {
            let declares = entry.type != nil || entry.name != nil || entry.category != nil || entry.cases != nil
                || entry.mutable != nil || entry.display != nil || entry.writableBy != nil
            if declares {
                refuse("identifier clashes with the built-in key \"\(identifier)\" (a built-in key takes only identifier, requirement and rules)")
            }
            if entryProblems.isEmpty, let requirement {
                configuredKeys.append(ConfiguredKey(identifier: identifier, requirement: requirement, rules: rules))
            }
            problems += entryProblems
            return
        }

        guard let typeName = entry.type else {
            problems += entryProblems + [Problem(key: identifier, "configured key is not declared (a custom key needs a type; built-in keys are \(AccountKeySchema.builtInDescriptors.map(\.identifier).joined(separator: ", ")))")]
            return
        }
        var valueType: AccountValueType?
        if typeName == "enum" {
            valueType = .enumeration(cases: entry.cases ?? [])
        } else if let type = Self.typeNames[typeName] {
            valueType = type
            if entry.cases != nil {
                refuse("cases given for type \(typeName) (only enum takes cases)")
            }
        } else {
            refuse("unknown type \"\(typeName)\" (expected one of \(AccountValueType.declarableNames.joined(separator: ", ")))")
        }
        var category = AccountKeyCategory.other
        if let name = entry.category {
            if let known = AccountKeyCategory(rawValue: name) {
                category = known
            } else {
                refuse("unknown category \"\(name)\" (expected one of \(Self.list(AccountKeyCategory.allCases)))")
            }
        }
        guard let valueType else {
            problems += entryProblems
            return
        }
        var writer = AccountKeyWriter.user
        if let name = entry.writableBy {
            if let known = AccountKeyWriter(rawValue: name) {
                writer = known
            } else {
                refuse("unknown writableBy \"\(name)\" (expected one of \(Self.list(AccountKeyWriter.allCases)))")
            }
        }
        if writer == .server, requirement == .requires {
            refuse("a key written by the server only cannot be required at sign-up (use collects, supports or manual)")
        }
        var options: AccountKeyOptions = []
        if entry.display ?? true { options.insert(.display) }
        if entry.mutable ?? true { options.insert(.mutable) }
        let descriptor = AccountKeyDescriptor(
            identifier: identifier,
            name: entry.name ?? identifier,
            category: category,
            valueType: valueType,
            options: options,
            rules: rules ?? [],
            initialValue: Self.initialValue(for: valueType),
            writableBy: writer
        )
        entryProblems += AccountKeySchema.descriptorProblems(descriptor)
        if entryProblems.isEmpty, let requirement {
            customKeys.append(descriptor)
            configuredKeys.append(ConfiguredKey(identifier: identifier, requirement: requirement))
        }
        problems += entryProblems
    }

    private func rule(_ entry: AccountSchemaFile.RuleEntry, refuse: (String) -> Void) -> ValidationRule? {
        switch entry {
        case let .builtIn(name):
            guard let rule = ValidationRule.builtInRules[name] else {
                refuse("unknown rule \"\(name)\" (expected one of \(ValidationRule.builtInRules.keys.sorted().joined(separator: ", ")), or {pattern, message})")
                return nil
            }
            return rule
        case let .custom(name, pattern, message, maxLength):
            guard let pattern else {
                refuse("rule without pattern")
                return nil
            }
            guard let message, !message.allSatisfy(\.isWhitespace) else {
                refuse("rule \"\(pattern)\" without message")
                return nil
            }
            if let maxLength, maxLength <= 0 {
                refuse("rule \"\(pattern)\" with maxLength \(maxLength) (must be positive)")
                return nil
            }
            do {
                return try ValidationRule(
                    name: name ?? "custom",
                    pattern: pattern,
                    message: message,
                    maximumLength: maxLength ?? ValidationRule.defaultMaximumLength
                )
            } catch {
                refuse("invalid regular expression \"\(error.pattern)\" in rule: \(error.reason)")
                return nil
            }
        }
    }

    /// Empty placeholders for signup forms, as SpeziAccount derives them; none where no empty value makes sense.
    private static func initialValue(for type: AccountValueType) -> AccountValue? {
        switch type {
        case .string: .string("")
        case .bool: .bool(false)
        case .integer: .integer(0)
        case .double: .double(0)
        case .stringList: .array([])
        case .personName: .object([:])
        case .date, .enumeration: nil
        }
    }

    private static func list<T: RawRepresentable>(_ cases: [T]) -> String where T.RawValue == String {
        cases.map(\.rawValue).joined(separator: ", ")
    }
}
