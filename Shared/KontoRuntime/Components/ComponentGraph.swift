import Logging
import ServiceLifecycle

/// The parts of a service process and what each needs, run as one ServiceLifecycle ``ServiceGroup``.
///
/// As in Spezi's component model: parts declare their dependencies, the start order is derived from them
/// (declaration order breaks ties, so it is stable), cycles and unknown names are refused when the graph is made,
/// and shutdown runs in reverse. The group's list is the start order and ServiceGroup shuts services down one
/// after another from the end of its list, waiting for each, so a part is asked to stop only after every part
/// that depends on it has finished (e.g. a wire server drains its accepted requests before the database
/// connections they use close). A part starts only once its dependencies are ready: a service when it has
/// started, a setup step when it has finished.
public struct ComponentGraph: Sendable {
    /// The components in start order.
    public let components: [Component]

    /// - Throws: ``ComponentGraphError`` for a name declared twice, a dependency on an undeclared name, or a cycle
    ///   (the error lists it).
    public init(_ components: [Component]) throws(ComponentGraphError) {
        self.components = try Self.startOrder(of: components)
    }

    /// The names of the components in the order they start; they stop in the reverse order.
    public var startOrder: [String] { self.components.map(\.name) }

    /// One ServiceGroup entry per component, in start order. Each run of a group made from them starts afresh.
    ///
    /// A part that throws, or a service that returns while nothing asked it to stop, shuts the rest down
    /// gracefully (in reverse order) and the group throws its error.
    public func serviceConfigurations(logger: Logger) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        var readiness: [String: ComponentReadiness] = [:]
        for component in self.components {
            readiness[component.name] = ComponentReadiness()
        }
        return self.components.map { component in
            let service = ComponentService(
                component: component,
                dependencies: component.dependencies.map { readiness[$0]! },
                readiness: readiness[component.name]!,
                logger: logger
            )
            return ServiceGroupConfiguration.ServiceConfiguration(
                service: service,
                successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup,
                serviceName: component.name
            )
        }
    }

    /// A group configuration of ``serviceConfigurations(logger:)``; set its signals to run it as a process.
    public func serviceGroupConfiguration(logger: Logger) -> ServiceGroupConfiguration {
        ServiceGroupConfiguration(services: self.serviceConfigurations(logger: logger), logger: logger)
    }

    /// Runs the components until a graceful shutdown of the calling service (or cancellation), then stops them
    /// in reverse order; for a graph that runs as one service inside another group.
    public func run(logger: Logger) async throws {
        try await ServiceGroup(configuration: self.serviceGroupConfiguration(logger: logger)).run()
    }

    /// Dependencies before dependants; among the components ready to start, the one declared first.
    private static func startOrder(of components: [Component]) throws(ComponentGraphError) -> [Component] {
        var index: [String: Int] = [:]
        for (position, component) in components.enumerated() {
            guard index.updateValue(position, forKey: component.name) == nil else {
                throw .duplicate(component.name)
            }
        }
        for component in components {
            for dependency in component.dependencies where index[dependency] == nil {
                throw .unknownDependency(dependency, of: component.name)
            }
        }
        var started = Set<String>()
        var order: [Component] = []
        var remaining = components
        while !remaining.isEmpty {
            guard let next = remaining.firstIndex(where: { $0.dependencies.allSatisfy(started.contains) }) else {
                throw .cycle(Self.cycle(among: remaining, started: started, index: index, components: components))
            }
            let component = remaining.remove(at: next)
            started.insert(component.name)
            order.append(component)
        }
        return order
    }

    /// A cycle among `remaining`, where every component waits for another that has not started: following the
    /// first such dependency from the first remaining component must come back to a component already visited.
    private static func cycle(
        among remaining: [Component],
        started: Set<String>,
        index: [String: Int],
        components: [Component]
    ) -> [String] {
        var path: [String] = []
        var current = remaining[0]
        while !path.contains(current.name) {
            path.append(current.name)
            let blocking = current.dependencies.first { !started.contains($0) }!
            current = components[index[blocking]!]
        }
        let loop = path[path.firstIndex(of: current.name)!...]
        return Array(loop) + [current.name]
    }
}
