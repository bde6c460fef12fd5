extension ValidationRule {
    /// Not empty and not only whitespace: `.*\S+.*`.
    public static let nonEmpty = builtIn("nonEmpty", #".*\S+.*"#, "This field cannot be empty.")
    /// Something, an `@`, then something: `.*@.+`.
    public static let minimalEmail = builtIn("minimalEmail", ".*@.+", "The provided email is invalid.")
    /// At least 8 characters: `.{8,}`.
    public static let minimalPassword = builtIn("minimalPassword", ".{8,}", "Your password must be at least 8 characters long.")
    /// At least 10 characters: `.{10,}`.
    public static let mediumPassword = builtIn("mediumPassword", ".{10,}", "Your password must be at least 10 characters long.")
    /// At least 12 characters: `.{12,}`.
    public static let strongPassword = builtIn("strongPassword", ".{12,}", "Your password must be at least 12 characters long.")
    /// Unicode letters only, with their combining marks (so decomposed "é" passes): `[\p{L}\p{M}]*`.
    public static let unicodeLettersOnly = builtIn("unicodeLettersOnly", #"[\p{L}\p{M}]*"#, "You must only use letters.")
    /// ASCII letters only: `[A-Za-z]*`.
    public static let asciiLettersOnly = builtIn("asciiLettersOnly", "[A-Za-z]*", "You must only use standard English letters.")

    /// Every built-in rule, by name, for schema files that refer to them.
    public static let builtInRules: [String: ValidationRule] = Dictionary(
        uniqueKeysWithValues: [nonEmpty, minimalEmail, minimalPassword, mediumPassword, strongPassword, unicodeLettersOnly, asciiLettersOnly]
            .map { ($0.name, $0) }
    )

    private static func builtIn(_ name: String, _ pattern: String, _ message: String) -> ValidationRule {
        do {
            // No cap: each built-in pattern matches in time linear in the value (one greedy run, no nested
            // quantifiers), and a cap would refuse long values, e.g. a long biography under nonEmpty.
            return try ValidationRule(name: name, pattern: pattern, message: message, maximumLength: .max)
        } catch {
            // The built-in patterns are constants; failing here is a programming error caught by any test run.
            fatalError("Built-in rule \(name) does not compile: \(error)")
        }
    }
}
