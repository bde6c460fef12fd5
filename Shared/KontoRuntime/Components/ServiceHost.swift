import Logging
import ServiceLifecycle

/// The shape every Konto service shares, built once: its storage (a PostgreSQL pool and its migrations, retried with
/// back-off while the database cannot be reached; or nothing, in memory), the clients of other services it calls,
/// the jobs that need storage (clean-ups, the outbox relay, event consumers), and last the wire server, which listens
/// only once everything it answers with is up. Shutdown runs in reverse: the wire server lets its accepted requests
/// finish before anything they need stops.
public struct ServiceHost: Sendable {
    private let name: String
    private let logger: Logger
    private var components: [Component] = []
    /// What a component that needs storage waits for: empty in memory.
    private var storage: [String] = []
    /// What the wire server waits for: storage, and the clients and jobs it needs.
    private var wireDependencies: [String] = []

    /// - Parameter name: the service's name, for the migrations' log lines.
    public init(_ name: String, logger: Logger) {
        self.name = name
        self.logger = logger
    }

    /// The database pool, then the migrations (retried until they apply, or the process shuts down).
    public mutating func database(_ pool: any Service, migrate: @escaping @Sendable () async throws -> Void) {
        let (name, logger) = (self.name, self.logger)
        components += [
            .service("postgres", pool),
            .setup("migrations", dependsOn: ["postgres"]) {
                try await SetupRetry.untilSuccess("\(name) migrations", logger: logger, migrate)
            },
        ]
        storage = ["postgres", "migrations"]
        wireDependencies += storage
    }

    /// A part that needs no storage (a client of another service, a hashing pool); the wire server waits for it when
    /// `servesWire`.
    public mutating func add(_ name: String, _ service: any Service, servesWire: Bool = true) {
        components.append(.service(name, service))
        if servesWire { wireDependencies.append(name) }
    }

    /// A part that needs storage (a job, a relay, a consumer), and the parts named in `needs` besides; the wire server
    /// does not wait for it.
    public mutating func addJob(_ name: String, needs: [String] = [], _ service: any Service) {
        components.append(.service(name, dependsOn: storage + needs, service))
    }

    /// The graph, with the wire server last.
    public func graph(wire: any Service) throws(ComponentGraphError) -> ComponentGraph {
        try ComponentGraph(components + [.service("wire", dependsOn: wireDependencies, wire)])
    }
}
