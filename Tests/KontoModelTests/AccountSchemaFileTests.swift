import Foundation
import KontoModel
import Testing

@Suite("Deployment key schema file (JSON)")
struct AccountSchemaFileTests {
    private func load(_ json: String) throws(AccountConfigurationError) -> AccountConfiguration {
        try AccountConfiguration(json: Data(json.utf8), source: "accounts.json")
    }

    /// The message a file with one key entry (besides userId) produces.
    private func problems(keyEntry: String) throws -> [String] {
        let error = try #require(throws: AccountConfigurationError.self) {
            try load(#"{"keys": [{"identifier": "userId", "requirement": "requires"}, \#(keyEntry)]}"#)
        }
        return error.description.components(separatedBy: "\n")
    }

    @Test("A file with every type builds the configuration it describes")
    func everyType() throws {
        let configuration = try load("""
        {
          "userIdType": "username",
          "unknownKeys": "keep",
          "supportedKeys": ["userId", "password", "nickname"],
          "keys": [
            {"identifier": "userId", "requirement": "requires", "rules": ["asciiLettersOnly"]},
            {"identifier": "password", "requirement": "requires", "rules": ["strongPassword"]},
            {"identifier": "name", "requirement": "collects"},
            {"identifier": "nickname", "name": "Nickname", "category": "name", "type": "string", "requirement": "requires",
             "rules": ["unicodeLettersOnly", {"name": "short", "pattern": ".{0,20}", "message": "At most 20 characters."}]},
            {"identifier": "newsletter", "name": "Newsletter", "type": "bool", "requirement": "collects", "display": false},
            {"identifier": "age", "name": "Age", "category": "personalDetails", "type": "integer", "requirement": "supports"},
            {"identifier": "height", "name": "Height", "category": "personalDetails", "type": "double", "requirement": "supports"},
            {"identifier": "memberSince", "name": "Member Since", "type": "date", "requirement": "manual", "mutable": false},
            {"identifier": "plan", "name": "Plan", "type": "enum", "cases": ["free", "pro"], "requirement": "collects"},
            {"identifier": "languages", "name": "Languages", "type": "stringList", "requirement": "supports"},
            {"identifier": "aliases", "name": "Aliases", "type": "[string]", "requirement": "supports"}
          ]
        }
        """)
        #expect(configuration.userIdType == .username)
        #expect(configuration.unknownKeys == .keep)
        #expect(configuration.supportedKeys == .exactly(["userId", "password", "nickname"]))
        #expect(configuration.keys.map(\.identifier) == [
            "userId", "password", "name", "nickname", "newsletter", "age", "height", "memberSince", "plan", "languages", "aliases",
        ])
        #expect(configuration.keys.map(\.requirement) == [
            .requires, .requires, .collects, .requires, .collects, .supports, .supports, .manual, .collects, .supports, .supports,
        ])
        let schema = configuration.schema
        #expect(schema.customDescriptors.map(\.valueType) == [
            .string, .bool, .integer, .double, .date, .enumeration(cases: ["free", "pro"]), .stringList, .stringList,
        ])
        #expect(schema["nickname"]?.category == .name)
        #expect(schema["newsletter"]?.category == .other)
        #expect(schema["newsletter"]?.options == [.mutable])
        #expect(schema["memberSince"]?.options == [.display])
        #expect(schema["nickname"]?.rules.map(\.name) == ["unicodeLettersOnly", "short"])
        #expect(configuration.rules(for: "userId") == [.asciiLettersOnly])
        #expect(configuration.rules(for: "password") == [.strongPassword])
        #expect(configuration.rules(for: "languages").isEmpty)

        // The configuration then checks details of every type.
        let json = try Fixtures.json([
            "userId": "ada", "password": "a-long-enough-password", "nickname": "Ada", "newsletter": true, "age": 36, "height": 1.7,
            "memberSince": "2020-01-01", "plan": "pro", "languages": ["en", "fr"], "aliases": [],
        ])
        let details = try AccountDetails.decode(json: json, schema: schema, unknownKeys: configuration.unknownKeys, userIdType: configuration.userIdType)
        try configuration.validate(details)

        var invalid = details
        invalid[identifier: "nickname"] = .string("Ada Augusta King, Countess of Lovelace")
        let error = try #require(throws: AccountError.self) { try configuration.validate(invalid) }
        #expect(error.fields.map(\.code) == [.rule("unicodeLettersOnly"), .rule("short")])
        #expect(error.fields.map(\.message) == ["You must only use letters.", "At most 20 characters."])
    }

    @Test("writableBy gives a key to the server: published, refused from the account holder, user by default")
    func writableBy() throws {
        let configuration = try load("""
        {"keys": [
          {"identifier": "userId", "requirement": "requires"},
          {"identifier": "plan", "type": "enum", "cases": ["free", "pro"], "requirement": "manual", "writableBy": "server"},
          {"identifier": "nickname", "type": "string", "requirement": "collects", "writableBy": "user"},
          {"identifier": "bio", "type": "string", "requirement": "supports"}
        ]}
        """)
        #expect(configuration.schema["plan"]?.writableBy == .server)
        #expect(configuration.schema["nickname"]?.writableBy == .user)
        #expect(configuration.schema["bio"]?.writableBy == .user)
        #expect(configuration.schema["email"]?.writableBy == .user, "built-in keys are the holder's")
        let refused = configuration.serverOwnedKeyErrors(["bio", "plan", "nickname", "plan"])
        #expect(refused.map(\.key) == ["plan"])
        #expect(refused.map(\.code) == [.serverOwnedKey])
        let published = try JSONSerialization.jsonObject(with: JSONEncoder().encode(configuration)) as? [String: Any]
        let keys = try #require(published?["keys"] as? [[String: Any]])
        #expect(keys.map { $0["writableBy"] as? String } == ["user", "server", "user", "user"])
        // An encoded descriptor from before writableBy existed decodes as the holder's.
        var descriptor = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(configuration.schema["plan"])) as? [String: Any])
        descriptor["writableBy"] = nil
        let older = try JSONDecoder().decode(AccountKeyDescriptor.self, from: JSONSerialization.data(withJSONObject: descriptor))
        #expect(older.writableBy == .user)
    }

    @Test("An unknown type is refused, naming the key, the type and the choices")
    func unknownType() throws {
        #expect(try problems(keyEntry: #"{"identifier": "biography", "type": "strng", "requirement": "collects"}"#) == [
            #"accounts.json: key "biography": unknown type "strng" (expected one of string, bool, integer, double, date, enum, stringList)"#,
        ])
    }

    @Test("A duplicate identifier is refused")
    func duplicateIdentifier() throws {
        let entry = #"{"identifier": "biography", "type": "string", "requirement": "collects"}"#
        #expect(try problems(keyEntry: entry + ", " + entry) == [#"accounts.json: key "biography": duplicate identifier"#])
    }

    @Test("A custom rule's maxLength comes from the file")
    func ruleMaxLength() throws {
        let configuration = try load(#"{"keys": [{"identifier": "userId", "requirement": "requires"}, {"identifier": "handle", "type": "string", "requirement": "collects", "rules": [{"pattern": "[a-z]*", "message": "Lowercase.", "maxLength": 8}, {"pattern": "[a-z]*", "message": "Lowercase."}]}]}"#)
        let rules = configuration.rules(for: "handle")
        #expect(rules.map(\.maximumLength) == [8, ValidationRule.defaultMaximumLength])
        #expect(rules[0].isSatisfied(by: "abcdefgh"))
        #expect(!rules[0].isSatisfied(by: "abcdefghi"))
    }

    @Test("A bad regular expression is refused, naming the pattern")
    func badRegex() throws {
        let lines = try problems(keyEntry: #"{"identifier": "handle", "type": "string", "requirement": "collects", "rules": [{"pattern": "[a-z", "message": "Lowercase."}]}"#)
        #expect(lines.count == 1)
        #expect(lines[0].hasPrefix(#"accounts.json: key "handle": invalid regular expression "[a-z" in rule: "#))
    }

    @Test("Other mistakes are each refused with a message", arguments: [
        (#"{"identifier": "email", "type": "string", "requirement": "collects"}"#,
         #"key "email": identifier clashes with the built-in key "email" (a built-in key takes only identifier, requirement and rules)"#),
        (#"{"identifier": "tier", "type": "enum", "requirement": "collects"}"#,
         #"key "tier": enum without cases (give at least one in "cases")"#),
        (#"{"identifier": "tier", "type": "enum", "cases": [], "requirement": "collects"}"#,
         #"key "tier": enum without cases (give at least one in "cases")"#),
        (#"{"identifier": "tier", "type": "string", "cases": ["a"], "requirement": "collects"}"#,
         #"key "tier": cases given for type string (only enum takes cases)"#),
        (#"{"identifier": "bio", "type": "string", "requirement": "needs"}"#,
         #"key "bio": unknown requirement "needs" (expected one of requires, collects, supports, manual)"#),
        (#"{"identifier": "bio", "type": "string"}"#,
         #"key "bio": missing requirement (expected one of requires, collects, supports, manual)"#),
        (#"{"identifier": "bio", "type": "string", "category": "hobbies", "requirement": "collects"}"#,
         #"key "bio": unknown category "hobbies" (expected one of credentials, name, contactDetails, personalDetails, other)"#),
        (#"{"identifier": "nickname", "requirement": "collects"}"#,
         #"key "nickname": configured key is not declared (a custom key needs a type; built-in keys are accountId, userId, password, name, dateOfBirth, genderIdentity, email, phoneNumbers)"#),
        (#"{"identifier": "bio", "type": "string", "requirement": "collects", "rules": ["nonEmptyy"]}"#,
         #"key "bio": unknown rule "nonEmptyy" (expected one of asciiLettersOnly, mediumPassword, minimalEmail, minimalPassword, nonEmpty, strongPassword, unicodeLettersOnly, or {pattern, message})"#),
        (#"{"identifier": "bio", "type": "string", "requirement": "collects", "rules": [{"pattern": ".+"}]}"#,
         #"key "bio": rule ".+" without message"#),
        (#"{"identifier": "bio", "type": "string", "requirement": "collects", "rules": [{"message": "m"}]}"#,
         #"key "bio": rule without pattern"#),
        (#"{"identifier": "bio", "type": "string", "requirement": "collects", "rules": [{"pattern": ".+", "message": "m", "maxLength": 0}]}"#,
         #"key "bio": rule ".+" with maxLength 0 (must be positive)"#),
        (#"{"identifier": "age", "type": "integer", "requirement": "collects", "rules": ["nonEmpty"]}"#,
         #"key "age": rules apply only to string and stringList keys, not integer"#),
        (#"{"identifier": "bio", "type": "string", "requirment": "collects", "requirement": "collects"}"#,
         #"key "bio": unknown field "requirment""#),
        (#"{"identifier": "my bio", "type": "string", "requirement": "collects"}"#,
         #"key "my bio": invalid identifier (use a letter, then letters, digits or _)"#),
        (#"{"identifier": "accountId", "requirement": "requires"}"#,
         #"key "accountId": accountId is always present and cannot be configured"#),
        (#"{"type": "string", "requirement": "collects"}"#,
         #"keys[1]: missing identifier"#),
        (#"{"identifier": "plan", "type": "string", "requirement": "manual", "writableBy": "admin"}"#,
         #"key "plan": unknown writableBy "admin" (expected one of user, server)"#),
        (#"{"identifier": "plan", "type": "string", "requirement": "requires", "writableBy": "server"}"#,
         #"key "plan": a key written by the server only cannot be required at sign-up (use collects, supports or manual)"#),
        (#"{"identifier": "email", "requirement": "collects", "writableBy": "server"}"#,
         #"key "email": identifier clashes with the built-in key "email" (a built-in key takes only identifier, requirement and rules)"#),
    ])
    func otherMistakes(entry: String, message: String) throws {
        #expect(try problems(keyEntry: entry) == ["accounts.json: " + message])
    }

    @Test("Problems outside the keys are refused too")
    func topLevelProblems() throws {
        let error = try #require(throws: AccountConfigurationError.self) {
            try load(#"{"userIdType": "phone", "unknownKeys": "ignore", "supportedKeys": "some", "kyes": [], "keys": [{"identifier": "userId", "requirement": "collects"}]}"#)
        }
        #expect(error.description == """
        accounts.json: unknown field "kyes"
        accounts.json: unknown userIdType "phone" (expected one of emailAddress, username)
        accounts.json: unknown unknownKeys policy "ignore" (expected one of reject, keep)
        accounts.json: unknown supportedKeys "some" (expected arbitrary or a list of identifiers)
        accounts.json: key "userId": userId must have requirement requires, not collects
        """)
    }

    @Test("A file without userId, or with undeclared supported keys, is refused")
    func missingUserIdAndUndeclaredSupported() throws {
        let error = try #require(throws: AccountConfigurationError.self) {
            try load(#"{"supportedKeys": ["password", "shoeColour"], "keys": [{"identifier": "password", "requirement": "requires"}]}"#)
        }
        #expect(error.problems.map(\.description) == [
            #"key "userId": userId must be configured with requirement requires"#,
            #"key "shoeColour": supported key is not declared"#,
        ])
    }

    @Test("Every problem in a file is reported at once")
    func allProblemsAtOnce() throws {
        let lines = try problems(keyEntry: """
        {"identifier": "a", "type": "strng", "requirement": "collects"},
        {"identifier": "b", "type": "enum", "requirement": "sometimes"},
        {"identifier": "c", "type": "string", "requirement": "collects", "rules": [{"pattern": "(", "message": "m"}]}
        """)
        #expect(lines.count == 4)
        #expect(lines[0] == #"accounts.json: key "a": unknown type "strng" (expected one of string, bool, integer, double, date, enum, stringList)"#)
        #expect(lines[1] == #"accounts.json: key "b": unknown requirement "sometimes" (expected one of requires, collects, supports, manual)"#)
        #expect(lines[2] == #"accounts.json: key "b": enum without cases (give at least one in "cases")"#)
        #expect(lines[3].hasPrefix(#"accounts.json: key "c": invalid regular expression "(""#))
    }

    @Test("Malformed JSON and wrongly typed fields are refused with where it happened")
    func malformedDocuments() throws {
        let syntax = try #require(throws: AccountConfigurationError.self) { try load("{\"keys\": [") }
        #expect(syntax.problems.count == 1)
        #expect(syntax.description.hasPrefix("accounts.json: malformed document: "))

        let wrongType = try #require(throws: AccountConfigurationError.self) {
            try load(#"{"keys": [{"identifier": "userId", "requirement": "requires", "rules": "nonEmpty"}]}"#)
        }
        #expect(wrongType.description.hasPrefix("accounts.json: at keys[0].rules: Expected to decode Array"))

        let notAnObject = try #require(throws: AccountConfigurationError.self) { try load("[]") }
        #expect(notAnObject.description.hasPrefix("accounts.json: at the top level: "))
    }
}
