/// A component graph that cannot run: refused when the graph is made, or a part that stopped on its own.
public struct ComponentGraphError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable codes, for logs and tests.
    public enum Code: String, Sendable {
        case duplicateComponent = "runtime.duplicateComponent"
        case unknownDependency = "runtime.unknownDependency"
        case dependencyCycle = "runtime.dependencyCycle"
        /// A service's `run()` returned while nothing asked it to stop.
        case finishedUnexpectedly = "runtime.componentFinishedUnexpectedly"
    }

    public let code: Code
    /// The components involved; for a cycle, in dependency order with the first repeated at the end.
    public let components: [String]
    public let message: String

    init(_ code: Code, components: [String], message: String) {
        self.code = code
        self.components = components
        self.message = message
    }

    static func duplicate(_ name: String) -> Self {
        Self(.duplicateComponent, components: [name], message: "component \"\(name)\" is declared more than once")
    }

    static func unknownDependency(_ name: String, of component: String) -> Self {
        Self(.unknownDependency, components: [component, name], message: "component \"\(component)\" depends on \"\(name)\", which is not declared")
    }

    static func cycle(_ path: [String]) -> Self {
        Self(.dependencyCycle, components: path, message: "components depend on each other in a cycle: \(path.joined(separator: " -> "))")
    }

    static func finishedUnexpectedly(_ name: String) -> Self {
        Self(.finishedUnexpectedly, components: [name], message: "component \"\(name)\" stopped while nothing asked it to")
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
