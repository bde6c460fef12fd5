/// A providers file (`KONTO_IDENTITY_PROVIDERS`) Identity cannot use: it refuses to start, naming every problem, each
/// with the provider it concerns, e.g. `providers.yaml: provider "apple": privateKeyFile: cannot read /run/key.p8`.
public struct IdentityProvidersError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code for callers that log or report it.
    public static let code = "configuration.invalidIdentityProviders"

    public let source: String
    public let problems: [String]

    public init(source: String, problems: [String]) {
        self.source = source
        self.problems = problems
    }

    public var description: String {
        problems.map { "\(source): \($0)" }.joined(separator: "\n")
    }
}
