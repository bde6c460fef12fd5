import Foundation
import KontoModel
import KontoRuntime
import Testing

@Suite("AccountConfigurationLoader")
struct AccountConfigurationLoaderTests {
    /// Writes `contents` to a fresh file in its own temporary directory, so tests share nothing.
    private func withFile<T>(named name: String, _ contents: String, _ body: (String) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent(name).path
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        return try body(path)
    }

    private func problems(yaml: String, file: String = "accounts.yaml") throws -> [String] {
        try withFile(named: file, yaml) { path in
            let error = try #require(throws: AccountConfigurationError.self) {
                try AccountConfigurationLoader().load(path: path)
            }
            return error.description.components(separatedBy: "\n")
        }
    }

    @Test("The checked-in deploy/accounts.yaml loads and uses every type")
    func exampleFile() throws {
        let path = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/accounts.yaml").path
        let configuration = try AccountConfigurationLoader().load(path: path)
        let types = Set(configuration.schema.customDescriptors.map(\.valueType.name))
        #expect(types == Set(AccountValueType.declarableNames))
        #expect(configuration.keys.first?.identifier == "userId")
        #expect(configuration.requirement(for: "handle") == .requires)
        #expect(configuration.rules(for: "password") == [.mediumPassword])
        #expect(configuration.schema["memberSince"]?.options.contains(.mutable) == false)
    }

    @Test("The example deploy/examples/accounts.email-name.yaml loads: only the credentials required, name and email asked for")
    func emailNameExample() throws {
        let path = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/examples/accounts.email-name.yaml").path
        let configuration = try AccountConfigurationLoader().load(path: path)
        #expect(configuration.keys.map(\.identifier) == ["userId", "password", "name", "email", "dateOfBirth", "genderIdentity", "phoneNumbers"])
        #expect(configuration.requiredIdentifiers == ["userId", "password"])
        #expect(configuration.requirement(for: "name") == .collects)
        #expect(configuration.requirement(for: "email") == .collects)
        #expect(configuration.requirement(for: "phoneNumbers") == .supports)
        #expect(configuration.schema.customDescriptors.isEmpty)
    }

    @Test("A YAML file with every type builds the configuration it describes", arguments: ["accounts.yaml", "accounts.yml"])
    func everyType(file: String) throws {
        let yaml = """
        userIdType: username
        unknownKeys: keep
        supportedKeys: [userId, password]
        keys:
          - {identifier: userId, requirement: requires, rules: [asciiLettersOnly]}
          - identifier: password
            requirement: requires
          - identifier: bio
            name: Bio
            category: personalDetails
            type: string
            requirement: collects
            rules:
              - nonEmpty
              - {pattern: '.{0,10}', message: At most 10 characters.}
          - {identifier: newsletter, type: bool, requirement: collects, display: false}
          - {identifier: age, type: integer, requirement: supports}
          - {identifier: height, type: double, requirement: supports}
          - {identifier: memberSince, type: date, requirement: manual, mutable: false}
          - {identifier: plan, type: enum, cases: [free, pro], requirement: collects}
          - {identifier: languages, type: stringList, requirement: supports}
          - {identifier: aliases, type: '[string]', requirement: supports}
        """
        let configuration = try withFile(named: file, yaml) { try AccountConfigurationLoader().load(path: $0) }
        #expect(configuration.userIdType == .username)
        #expect(configuration.unknownKeys == .keep)
        #expect(configuration.supportedKeys == .exactly(["userId", "password"]))
        #expect(configuration.schema.customDescriptors.map(\.valueType) == [
            .string, .bool, .integer, .double, .date, .enumeration(cases: ["free", "pro"]), .stringList, .stringList,
        ])
        #expect(configuration.schema["bio"]?.rules.map(\.message) == ["This field cannot be empty.", "At most 10 characters."])
        #expect(configuration.schema["newsletter"]?.options == [.mutable])

        var details = AccountDetails(userIdType: .username)
        details[\.userId] = "ada"
        details[\.password] = "long enough"
        details[identifier: "bio"] = .string("far too long a biography")
        let error = try #require(throws: AccountError.self) { try configuration.validate(details) }
        #expect(error.fields == [AccountFieldError(key: "bio", code: .rule("custom"), message: "At most 10 characters.")])
    }

    @Test("YAML and JSON files describing the same keys give the same configuration")
    func yamlAndJsonAgree() throws {
        let yaml = "keys:\n  - {identifier: userId, requirement: requires}\n  - {identifier: plan, type: enum, cases: [a, b], requirement: collects}\n"
        let json = #"{"keys": [{"identifier": "userId", "requirement": "requires"}, {"identifier": "plan", "type": "enum", "cases": ["a", "b"], "requirement": "collects"}]}"#
        let fromYAML = try withFile(named: "a.yaml", yaml) { try AccountConfigurationLoader().load(path: $0) }
        let fromJSON = try withFile(named: "a.json", json) { try AccountConfigurationLoader().load(path: $0) }
        #expect(fromYAML == fromJSON)
    }

    @Test("Bad keys in a YAML file are refused naming the file, the key and the problem")
    func badKeys() throws {
        let lines = try problems(yaml: """
        keys:
          - {identifier: userId, requirement: requires}
          - {identifier: biography, type: strng, requirement: collects}
          - {identifier: biography, type: string, requirement: collects}
          - {identifier: email, type: string, requirement: collects}
          - {identifier: handle, type: string, requirement: collects, rules: [{pattern: '[a-z', message: Lowercase.}]}
          - {identifier: tier, type: enum, requirement: collects}
          - {identifier: nickname, requirement: collects}
        """)
        #expect(lines.count == 6)
        #expect(lines[0] == #"accounts.yaml: key "biography": unknown type "strng" (expected one of string, bool, integer, double, date, enum, stringList)"#)
        #expect(lines[1] == #"accounts.yaml: key "biography": duplicate identifier"#)
        #expect(lines[2].hasPrefix(#"accounts.yaml: key "email": identifier clashes with the built-in key "email""#))
        #expect(lines[3].hasPrefix(#"accounts.yaml: key "handle": invalid regular expression "[a-z" in rule: "#))
        #expect(lines[4] == #"accounts.yaml: key "tier": enum without cases (give at least one in "cases")"#)
        #expect(lines[5].hasPrefix(#"accounts.yaml: key "nickname": configured key is not declared"#))
    }

    @Test("Malformed YAML is refused with the file name and the parser's position")
    func malformedYAML() throws {
        let lines = try problems(yaml: "keys:\n  - {identifier: userId, requirement: requires\n  - : :\n")
        #expect(lines.first?.hasPrefix("accounts.yaml: malformed document: ") == true)
        #expect(lines.joined().contains("line"))
    }

    @Test("A YAML field of the wrong shape is refused with its path")
    func wrongShape() throws {
        let lines = try problems(yaml: "keys:\n  - identifier: userId\n    requirement: requires\n    rules: nonEmpty\n")
        #expect(lines.count == 1)
        #expect(lines[0].hasPrefix("accounts.yaml: at keys[0].rules: "))
        #expect(try problems(yaml: "- just\n- a list\n").first?.hasPrefix("accounts.yaml: at the top level: ") == true)
    }

    @Test("An empty file is refused", arguments: ["", "\n  \n", "# only a comment\n"])
    func emptyFile(yaml: String) throws {
        #expect(try problems(yaml: yaml) == ["accounts.yaml: the file is empty"])
    }

    @Test("Unknown extensions and missing files are refused")
    func unsupportedOrMissing() throws {
        #expect(try problems(yaml: "keys: []", file: "accounts.toml") == ["accounts.toml: unsupported file type (expected .yaml, .yml or .json)"])
        let missing = try #require(throws: AccountConfigurationError.self) {
            try AccountConfigurationLoader().load(path: "/nonexistent/konto/accounts.yaml")
        }
        #expect(missing.description == "accounts.yaml: cannot read file at /nonexistent/konto/accounts.yaml")
    }

    @Test("Formats are chosen by extension", arguments: [
        ("a.yaml", AccountConfigurationLoader.Format.yaml), ("a.YML", .yaml), ("dir.v1/a.json", .json),
    ])
    func formatByExtension(path: String, format: AccountConfigurationLoader.Format) {
        #expect(AccountConfigurationLoader.Format(path: path) == format)
    }
}
