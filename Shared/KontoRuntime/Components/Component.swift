import ServiceLifecycle

/// One part of a service process, named, with the names of the parts it needs (Spezi's `@Dependency`, declared
/// by name so that parts of different libraries can meet without importing each other).
///
/// A ``ComponentGraph`` starts a part only once everything it depends on is ready, and shuts parts down in the
/// reverse order, so a part never outlives what it uses.
public struct Component: Sendable {
    /// What a part does while the process runs.
    public enum Role: Sendable {
        /// A long-running part; ready for its dependants as soon as it has started (they may call it at once:
        /// e.g. a connection pool, which connects on first use).
        case service(any Service)
        /// A long-running part that others reach over the network: ready for its dependants once `listening`
        /// returns (its socket is bound), so a client among them connects at its first attempt instead of finding
        /// nothing there and failing its callers fast until it retries.
        case server(any Service, listening: @Sendable () async throws -> Void)
        /// A step that must finish before its dependants start (e.g. migrations). A graceful shutdown cancels it
        /// while it runs; it should then throw (`CancellationError`) or return, and its dependants never start.
        case setup(@Sendable () async throws -> Void)
    }

    public let name: String
    public let dependencies: [String]
    public let role: Role

    public init(name: String, dependsOn dependencies: [String] = [], role: Role) {
        self.name = name
        self.dependencies = dependencies
        self.role = role
    }

    /// A long-running part.
    public static func service(_ name: String, dependsOn dependencies: [String] = [], _ service: any Service) -> Component {
        Component(name: name, dependsOn: dependencies, role: .service(service))
    }

    /// A long-running part that listens: its dependants start once `listening` returns (e.g. `localAddress()`).
    public static func server(
        _ name: String,
        dependsOn dependencies: [String] = [],
        _ service: any Service,
        listening: @escaping @Sendable () async throws -> Void
    ) -> Component {
        Component(name: name, dependsOn: dependencies, role: .server(service, listening: listening))
    }

    /// A step that must finish before its dependants start.
    public static func setup(
        _ name: String,
        dependsOn dependencies: [String] = [],
        _ body: @escaping @Sendable () async throws -> Void
    ) -> Component {
        Component(name: name, dependsOn: dependencies, role: .setup(body))
    }
}
