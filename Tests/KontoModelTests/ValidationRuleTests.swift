import KontoModel
import Testing

@Suite("Validation rules")
struct ValidationRuleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let rule: ValidationRule
        let pattern: String
        let passing: String
        let failing: String
        let message: String

        var testDescription: String { rule.name }
    }

    static let cases: [Case] = [
        Case(rule: .nonEmpty, pattern: #".*\S+.*"#, passing: " a ", failing: " \t ", message: "This field cannot be empty."),
        Case(rule: .minimalEmail, pattern: ".*@.+", passing: "ada@example.org", failing: "ada@", message: "The provided email is invalid."),
        Case(rule: .minimalPassword, pattern: ".{8,}", passing: "12345678", failing: "1234567", message: "Your password must be at least 8 characters long."),
        Case(rule: .mediumPassword, pattern: ".{10,}", passing: "1234567890", failing: "123456789", message: "Your password must be at least 10 characters long."),
        Case(rule: .strongPassword, pattern: ".{12,}", passing: "123456789012", failing: "12345678901", message: "Your password must be at least 12 characters long."),
        Case(rule: .unicodeLettersOnly, pattern: #"[\p{L}\p{M}]*"#, passing: "Zoë", failing: "Zoë1", message: "You must only use letters."),
        Case(rule: .asciiLettersOnly, pattern: "[A-Za-z]*", passing: "Zoe", failing: "Zoë", message: "You must only use standard English letters."),
    ]

    @Test("Each built-in rule has the seeds' pattern and message, passes and fails", arguments: cases)
    func builtInRule(testCase: Case) {
        #expect(testCase.rule.pattern == testCase.pattern)
        #expect(testCase.rule.message == testCase.message)
        #expect(testCase.rule.isSatisfied(by: testCase.passing))
        #expect(!testCase.rule.isSatisfied(by: testCase.failing))
        #expect(ValidationRule.builtInRules[testCase.rule.name] == testCase.rule)
    }

    @Test("Rules match the whole string, not a part of it")
    func wholeStringMatch() throws {
        let digits = try ValidationRule(pattern: "[0-9]+", message: "Digits only.")
        #expect(digits.isSatisfied(by: "123"))
        #expect(!digits.isSatisfied(by: "a123"))
        #expect(!digits.isSatisfied(by: "123a"))
        #expect(!digits.isSatisfied(by: "123\n"))
    }

    @Test("`.` matches line breaks too, as the (?s) pattern the HTTP API's document publishes does")
    func dotMatchesLineBreaks() throws {
        let rule = try ValidationRule(pattern: "a.b", message: "a, anything, b.")
        for separator in ["\n", "\r", "\u{2028}", "-"] {
            #expect(rule.isSatisfied(by: "a\(separator)b"))
        }
        #expect(!rule.isSatisfied(by: "a\r\nb"), "two scalars, not one")
    }

    @Test("Lengths count Unicode scalars, as JSON Schema does: not bytes, UTF-16 units or grapheme clusters")
    func lengthsCountScalars() {
        #expect(ValidationRule.minimalPassword.isSatisfied(by: "ääääääää"))
        #expect(!ValidationRule.minimalPassword.isSatisfied(by: "äääääää"))
        // Four letters, each with a combining mark: eight scalars, four graphemes.
        #expect(ValidationRule.minimalPassword.isSatisfied(by: String(repeating: "a\u{0308}", count: 4)))
        // One family emoji is seven scalars joined into one grapheme.
        #expect(!ValidationRule.minimalPassword.isSatisfied(by: "👩‍👩‍👧‍👦"))
        #expect(ValidationRule.minimalPassword.isSatisfied(by: "👩‍👩‍👧‍👦!"))
    }

    @Test("Decomposed letters with combining marks count as letters")
    func combiningMarks() {
        #expect(ValidationRule.unicodeLettersOnly.isSatisfied(by: "Zoe\u{0308}"))
        #expect(!ValidationRule.unicodeLettersOnly.isSatisfied(by: "Zoë Smith"))
    }

    @Test("A custom rule keeps its name, pattern and message")
    func customRule() throws {
        let rule = try ValidationRule(name: "handle", pattern: "@[a-z]{2,15}", message: "Use @ and 2 to 15 lowercase letters.")
        #expect(rule.isSatisfied(by: "@ada"))
        #expect(!rule.isSatisfied(by: "@a"))
        #expect(!rule.isSatisfied(by: "ada"))
        #expect(rule.message == "Use @ and 2 to 15 lowercase letters.")
        #expect(rule.name == "handle")
        #expect(try ValidationRule(pattern: "x", message: "m").name == "custom")
    }

    @Test("A pattern that does not compile is refused, naming the pattern")
    func invalidPattern() throws {
        let error = try #require(throws: ValidationRuleError.self) {
            try ValidationRule(pattern: "[a-", message: "m")
        }
        #expect(error.pattern == "[a-")
        #expect(error.description.hasPrefix("invalid regular expression \"[a-\": "))
    }

    @Test("One compiled rule validates from many tasks at once")
    func concurrentUse() async throws {
        let rule = try ValidationRule(pattern: "[a-z]+@[a-z]+", message: "Lowercase address.")
        let allCorrect = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<500 {
                let valid = index.isMultiple(of: 2)
                group.addTask { rule.isSatisfied(by: valid ? "ada@example" : "ADA@example") == valid }
            }
            return await group.reduce(true) { $0 && $1 }
        }
        #expect(allCorrect)
    }

    @Test("A custom rule refuses a value over its length cap without matching it")
    func lengthCap() throws {
        // Nested quantifiers: Swift's backtracking Regex needs time exponential in the run of a's to fail this.
        let catastrophic = try ValidationRule(pattern: "(a+)+b", message: "m", maximumLength: 64)
        #expect(!catastrophic.isSatisfied(by: String(repeating: "a", count: 5_000)))
        #expect(catastrophic.isSatisfied(by: String(repeating: "a", count: 10) + "b"))
        let capped = try ValidationRule(pattern: ".*", message: "m", maximumLength: 4)
        #expect(capped.isSatisfied(by: "abcd"))
        #expect(!capped.isSatisfied(by: "abcde"))
        // The cap counts UTF-8 bytes: "é" is two.
        #expect(!capped.isSatisfied(by: "ééé"))
        #expect(try ValidationRule(pattern: "x", message: "m").maximumLength == ValidationRule.defaultMaximumLength)
        #expect(throws: ValidationRuleError.self) { try ValidationRule(pattern: "x", message: "m", maximumLength: 0) }
    }

    @Test("Built-in rules have no cap: a 64 KiB biography is not empty")
    func builtInsUncapped() {
        let long = String(repeating: "word ", count: 13_108)
        #expect(long.utf8.count > 65_536 - 5)
        #expect(ValidationRule.nonEmpty.isSatisfied(by: long))
        #expect(!ValidationRule.nonEmpty.isSatisfied(by: String(repeating: " ", count: 65_536)))
    }
}
