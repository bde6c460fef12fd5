import Foundation
import KontoModel
import Testing

@Suite("AccountConfiguration")
struct AccountConfigurationTests {
    private func validDetails() -> AccountDetails {
        var details = AccountDetails()
        details[\.userId] = "ada@example.org"
        details[\.password] = "correct horse"
        details[\.name] = PersonName(givenName: "Ada")
        details[\.biography] = "Mathematician"
        return details
    }

    @Test("Valid details pass")
    func validDetailsPass() throws {
        try Fixtures.configuration().validate(validDetails())
    }

    @Test("Required keys without rules get nonEmpty; configured rules replace the key's own")
    func effectiveRules() throws {
        let configuration = try Fixtures.configuration()
        #expect(configuration.rules(for: "biography") == [.nonEmpty])
        #expect(configuration.rules(for: "userId") == [.minimalEmail])
        #expect(configuration.rules(for: "password") == [.minimalPassword])
        #expect(configuration.rules(for: "email") == [.minimalEmail])
        #expect(configuration.rules(for: "plan").isEmpty)
        // A required non-string key has no rule: being present is what "non empty" means.
        #expect(configuration.rules(for: "name").isEmpty)

        let strict = try AccountConfiguration(
            userIdType: .username,
            keys: [.requires(\.userId, rules: [.asciiLettersOnly]), .requires(\.password, rules: [.strongPassword])]
        )
        #expect(strict.rules(for: "userId") == [.asciiLettersOnly])
        #expect(strict.rules(for: "password") == [.strongPassword])
        let usernames = try AccountConfiguration(userIdType: .username, keys: [.requires(\.userId)])
        #expect(usernames.rules(for: "userId") == [.nonEmpty])
    }

    @Test("Every violation is reported at once, with the rule's message")
    func allViolations() throws {
        var details = validDetails()
        details[\.userId] = "not-an-email"
        details[\.password] = "short"
        details[\.biography] = "   "
        details[\.email] = "nobody"
        details[\.name] = nil
        details[identifier: "plan"] = .string("enterprise")
        let error = try #require(throws: AccountError.self) {
            try Fixtures.configuration().validate(details)
        }
        #expect(error.code == .validationFailed)
        #expect(error.fields == [
            AccountFieldError(key: "biography", code: .rule("nonEmpty"), message: "This field cannot be empty."),
            AccountFieldError(key: "email", code: .rule("minimalEmail"), message: "The provided email is invalid."),
            AccountFieldError(key: "password", code: .rule("minimalPassword"), message: "Your password must be at least 8 characters long."),
            AccountFieldError(key: "plan", code: .invalidType, message: "Invalid value: expected one of free, pro."),
            AccountFieldError(key: "userId", code: .rule("minimalEmail"), message: "The provided email is invalid."),
            AccountFieldError(key: "name", code: .missingAccountValue, message: "This field is required."),
        ])
        #expect(!error.description.contains("short"))
    }

    @Test("Absent required keys alone are reported as missingAccountValue")
    func missingValues() throws {
        let error = try #require(throws: AccountError.self) {
            try Fixtures.configuration().validate(AccountDetails())
        }
        #expect(error.code == .missingAccountValue)
        #expect(error.code.rawValue == "account.missingAccountValue")
        #expect(error.fields.map(\.key) == ["userId", "password", "name", "biography"])
        #expect(error.fields.allSatisfy { $0.code == .missingAccountValue })
    }

    @Test("A storage provider can require only the keys it holds")
    func customRequiredSet() throws {
        var details = validDetails()
        details[\.password] = nil
        let configuration = try Fixtures.configuration()
        try configuration.validate(details, requiring: configuration.requiredIdentifiers.filter { $0 != "password" })
        #expect(throws: AccountError.self) {
            try configuration.validate(details)
        }
    }

    @Test("String-list rules apply to every element")
    func stringListRules() throws {
        let schema = try AccountKeySchema(customKeys: [
            AccountKeyDescriptor(identifier: "tags", name: "Tags", category: .other, valueType: .stringList, rules: [.asciiLettersOnly]),
        ])
        let configuration = try AccountConfiguration(keys: [.requires(\.userId), ConfiguredKey(identifier: "tags", requirement: .collects)], schema: schema)
        var details = AccountDetails()
        details[\.userId] = "ada@example.org"
        details[identifier: "tags"] = .array([.string("swift"), .string("server")])
        try configuration.validate(details)
        details[identifier: "tags"] = .array([.string("swift"), .string("s3rver")])
        let error = try #require(throws: AccountError.self) { try configuration.validate(details) }
        #expect(error.fields == [AccountFieldError(key: "tags", code: .rule("asciiLettersOnly"), message: "You must only use standard English letters.")])
    }

    @Test("Unknown keys are refused or kept as configured")
    func unknownKeys() throws {
        var details = validDetails()
        details[identifier: "favouriteColour"] = .string("blue")
        let error = try #require(throws: AccountError.self) { try Fixtures.configuration(unknownKeys: .reject).validate(details) }
        #expect(error.fields == [AccountFieldError(key: "favouriteColour", code: .unknownKey, message: "Unknown account key.")])
        try Fixtures.configuration(unknownKeys: .keep).validate(details)
    }

    @Test("Supported keys: arbitrary or exactly a set")
    func supportedKeys() throws {
        #expect(SupportedKeys.arbitrary.contains("anything"))
        let exactly = SupportedKeys.exactly(["userId", "password"])
        #expect(exactly.contains("userId"))
        #expect(!exactly.contains("name"))
        let data = try JSONEncoder().encode(exactly)
        #expect(String(decoding: data, as: UTF8.self) == #"["password","userId"]"#)
        #expect(try JSONDecoder().decode(SupportedKeys.self, from: data) == exactly)
        #expect(try JSONDecoder().decode(SupportedKeys.self, from: Data(#""arbitrary""#.utf8)) == .arbitrary)
    }

    @Test("Configurations in code are checked too, reporting every problem")
    func invalidConfigurationInCode() throws {
        let error = try #require(throws: AccountConfigurationError.self) {
            try AccountConfiguration(
                keys: [
                    .collects(\.userId),
                    .collects(\.name),
                    .supports(\.name),
                    ConfiguredKey(identifier: "accountId", requirement: .manual),
                    ConfiguredKey(identifier: "nickname", requirement: .collects),
                    .collects(\.dateOfBirth, rules: [.nonEmpty]),
                ],
                supportedKeys: .exactly(["userId", "shoeColour"])
            )
        }
        #expect(error.description == """
        configuration: key "name": duplicate identifier
        configuration: key "accountId": accountId is always present and cannot be configured
        configuration: key "nickname": configured key is not declared (declare it with a type, or use a built-in key)
        configuration: key "dateOfBirth": rules apply only to string and stringList keys, not date
        configuration: key "userId": userId must have requirement requires, not collects
        configuration: key "shoeColour": supported key is not declared
        """)
    }

    @Test("Schemas refuse custom keys that clash, repeat or are malformed")
    func invalidSchemaInCode() throws {
        let error = try #require(throws: AccountConfigurationError.self) {
            try AccountKeySchema(customKeys: [
                AccountKeyDescriptor(identifier: "email", name: "Email", category: .contactDetails, valueType: .string),
                BiographyKey.descriptor,
                BiographyKey.descriptor,
                AccountKeyDescriptor(identifier: "2fa", name: "2FA", category: .credentials, valueType: .bool),
                AccountKeyDescriptor(identifier: "tier", name: " ", category: .other, valueType: .enumeration(cases: [])),
                AccountKeyDescriptor(identifier: "level", name: "Level", category: .other, valueType: .enumeration(cases: ["a", "a"])),
                AccountKeyDescriptor(identifier: "age", name: "Age", category: .other, valueType: .integer, rules: [.nonEmpty]),
            ])
        }
        #expect(error.problems.map(\.description) == [
            "key \"email\": identifier clashes with the built-in key \"email\"",
            "key \"biography\": duplicate identifier",
            "key \"2fa\": invalid identifier (use a letter, then letters, digits or _)",
            "key \"tier\": empty name",
            "key \"tier\": enum without cases (give at least one in \"cases\")",
            "key \"level\": duplicate enum case \"a\"",
            "key \"age\": rules apply only to string and stringList keys, not integer",
        ])
    }

    @Test("The default configuration is SpeziAccount's: userId, password and name required, date of birth and gender identity collected")
    func defaultConfiguration() {
        let configuration = AccountConfiguration.default
        #expect(configuration.keys.map(\.identifier) == ["userId", "password", "name", "dateOfBirth", "genderIdentity"])
        #expect(configuration.requiredIdentifiers == ["userId", "password", "name"])
        #expect(configuration.userIdType == .emailAddress)
        #expect(configuration.requirement(for: "dateOfBirth") == .collects)
        #expect(configuration.requirement(for: "genderIdentity") == .collects)
        #expect(configuration.requirement(for: "email") == nil)
        #expect(configuration.requirement(for: "phoneNumbers") == nil)
        #expect(configuration.requirement(for: "biography") == nil)
        var details = AccountDetails()
        details[\.userId] = "ada@example.org"
        details[\.password] = "correct horse battery"
        let missing = try? #require(throws: AccountError.self) { try configuration.validate(details) }
        #expect(missing?.fields.map(\.key) == ["name"])
    }

    @Test("The schema publishes descriptors with types, options and rules")
    func publishedSchema() throws {
        let schema = try AccountKeySchema(customKeys: [BiographyKey.descriptor])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let array = try #require(try JSONSerialization.jsonObject(with: try encoder.encode(schema)) as? [[String: Any]])
        #expect(array.count == 9)
        let gender = try #require(array.first { $0["identifier"] as? String == "genderIdentity" })
        #expect((gender["valueType"] as? [String: Any])?["type"] as? String == "enum")
        let password = try #require(array.first { $0["identifier"] as? String == "password" })
        #expect(password["options"] as? [String] == ["mutable"])
        #expect(password["isSecret"] as? Bool == true)
        let email = try #require(array.first { $0["identifier"] as? String == "email" })
        #expect((email["rules"] as? [[String: String]])?.first?["pattern"] == ".*@.+")
        let descriptors = try JSONDecoder().decode([AccountKeyDescriptor].self, from: try encoder.encode(schema))
        #expect(descriptors == schema.descriptors)
        #expect(try JSONDecoder().decode(AccountKeySchema.self, from: try encoder.encode(schema)) == schema)
    }

    @Test("A schema from the wire is checked like any other")
    func decodedSchemaIsChecked() throws {
        let malformed = [AccountKeyDescriptor(identifier: "tier", name: "Tier", category: .other, valueType: .enumeration(cases: []))]
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(AccountKeySchema.self, from: try JSONEncoder().encode(malformed))
        }
    }

    @Test("The published configuration lists configured keys in order with the rules enforced")
    func publishedConfiguration() throws {
        let data = try JSONEncoder().encode(try Fixtures.configuration())
        let object = try Fixtures.jsonObject(data)
        #expect(object["userIdType"] as? String == "emailAddress")
        let keys = try #require(object["keys"] as? [[String: Any]])
        #expect(keys.compactMap { $0["identifier"] as? String } == [
            "userId", "password", "name", "email", "dateOfBirth", "genderIdentity", "phoneNumbers", "biography", "memberSince", "plan",
        ])
        let biography = try #require(keys.first { $0["identifier"] as? String == "biography" })
        #expect(biography["requirement"] as? String == "requires")
        #expect(biography["category"] as? String == "personalDetails")
        #expect((biography["rules"] as? [[String: String]])?.map { $0["name"] } == ["nonEmpty"])
        let plan = try #require(keys.first { $0["identifier"] as? String == "plan" })
        #expect((plan["valueType"] as? [String: Any])?["cases"] as? [String] == ["free", "pro"])
        let userId = try #require(keys.first { $0["identifier"] as? String == "userId" })
        #expect((userId["rules"] as? [[String: String]])?.first?["message"] == "The provided email is invalid.")
    }
}
