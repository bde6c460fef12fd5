/// A configuration or key schema that cannot be used; services refuse to start with it.
///
/// Every problem is reported, each naming its key when it concerns one, e.g.
/// `accounts.yaml: key "biography": unknown type "strng" (expected one of …)`.
public struct AccountConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One thing wrong with the configuration.
    public struct Problem: Sendable, Hashable, CustomStringConvertible {
        /// The key identifier concerned, if any.
        public let key: String?
        public let message: String

        public init(key: String?, _ message: String) {
            self.key = key
            self.message = message
        }

        public var description: String {
            (key.map { "key \"\($0)\": " } ?? "") + message
        }
    }

    /// A stable code for callers that log or report it.
    public static let code = "configuration.invalidAccountSchema"

    /// Where the configuration came from (a file name, or `configuration` for Swift code).
    public let source: String
    public let problems: [Problem]

    public init(source: String, problems: [Problem]) {
        self.source = source
        self.problems = problems
    }

    /// One line per problem, each prefixed by the source.
    public var description: String {
        problems.map { "\(source): \($0)" }.joined(separator: "\n")
    }

    /// The same problems attributed to another source (e.g. the file they were read from).
    public func attributed(to source: String) -> AccountConfigurationError {
        AccountConfigurationError(source: source, problems: problems)
    }
}
