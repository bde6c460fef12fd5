/// A configuration variable that is missing or malformed; a service prints it and exits.
public struct ServiceEnvironmentError: Error, Sendable, Equatable, CustomStringConvertible {
    public static let code = "configuration.invalidEnvironment"

    public let variable: String
    public let problem: String

    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "\(variable) \(problem)" }
}
