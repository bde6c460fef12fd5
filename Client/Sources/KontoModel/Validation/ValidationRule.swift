/// A rule a string value must satisfy: a regular expression that must match the whole string.
///
/// The pattern is compiled once, when the rule is made (at configuration load), not per validation.
public struct ValidationRule: Sendable, Hashable, CustomStringConvertible {
    /// A stable name; built-in rules use their own (e.g. `nonEmpty`), custom rules default to `custom`.
    public let name: String
    /// The regular expression (Swift `Regex` syntax) that must match the whole value.
    public let pattern: String
    /// The message shown when the rule is violated.
    public let message: String
    /// The longest value (UTF-8 bytes) the pattern is matched against; a longer one violates the rule unmatched.
    ///
    /// Swift's `Regex` backtracks, so a deployment pattern with nested quantifiers can take time exponential in the
    /// value's length; capping the length before matching bounds what one crafted value can cost.
    public let maximumLength: Int
    private let compiled: CompiledPattern

    /// The cap of custom rules unless they set one (`maxLength` in a schema file).
    public static let defaultMaximumLength = 4_096

    /// Compiles a custom rule; throws ``ValidationRuleError`` naming the pattern when it does not compile.
    public init(
        name: String = "custom",
        pattern: String,
        message: String,
        maximumLength: Int = ValidationRule.defaultMaximumLength
    ) throws(ValidationRuleError) {
        guard maximumLength > 0 else {
            throw ValidationRuleError(pattern: pattern, reason: "maxLength must be positive")
        }
        do {
            self.compiled = try CompiledPattern(pattern)
        } catch {
            throw ValidationRuleError(pattern: pattern, reason: String(describing: error))
        }
        self.name = name
        self.pattern = pattern
        self.message = message
        self.maximumLength = maximumLength
    }

    /// Whether `value` satisfies the rule: at most ``maximumLength`` bytes, and a whole-string match.
    public func isSatisfied(by value: String) -> Bool {
        value.utf8.count <= maximumLength && compiled.wholeMatches(value)
    }

    public var description: String {
        "\(name) /\(pattern)/"
    }

    public static func == (lhs: ValidationRule, rhs: ValidationRule) -> Bool {
        lhs.name == rhs.name && lhs.pattern == rhs.pattern && lhs.message == rhs.message && lhs.maximumLength == rhs.maximumLength
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(pattern)
        hasher.combine(message)
        hasher.combine(maximumLength)
    }
}
