/// A rule whose pattern is not a valid regular expression.
public struct ValidationRuleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The pattern as written.
    public let pattern: String
    /// The regex parser's explanation.
    public let reason: String

    public var description: String {
        "invalid regular expression \"\(pattern)\": \(reason)"
    }
}
