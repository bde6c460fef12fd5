/// A rule a string value must satisfy: a regular expression that must match the whole string.
///
/// The pattern is compiled once, when the rule is made (at configuration load), not per validation.
public struct ValidationRule: Sendable, Equatable, CustomStringConvertible {
    /// A stable name; built-in rules use their own (e.g. `nonEmpty`), custom rules default to `custom`.
    public let name: String
    /// The regular expression (Swift `Regex` syntax) that must match the whole value.
    public let pattern: String
    /// The message shown when the rule is violated.
    public let message: String
    private let compiled: CompiledPattern

    /// Compiles a custom rule; throws ``ValidationRuleError`` naming the pattern when it does not compile.
    public init(name: String = "custom", pattern: String, message: String) throws(ValidationRuleError) {
        do {
            self.compiled = try CompiledPattern(pattern)
        } catch {
            throw ValidationRuleError(pattern: pattern, reason: String(describing: error))
        }
        self.name = name
        self.pattern = pattern
        self.message = message
    }

    /// Whether `value` satisfies the rule (whole-string match).
    public func isSatisfied(by value: String) -> Bool {
        compiled.wholeMatches(value)
    }

    public var description: String {
        "\(name) /\(pattern)/"
    }

    public static func == (lhs: ValidationRule, rhs: ValidationRule) -> Bool {
        lhs.name == rhs.name && lhs.pattern == rhs.pattern && lhs.message == rhs.message
    }
}
