import KontoRuntime
import Logging
import ServiceLifecycle
import Testing

@Suite("Service host")
struct ServiceHostTests {
    struct Idle: Service {
        func run() async throws {}
    }

    static func dependencies(_ graph: ComponentGraph) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: graph.components.map { ($0.name, $0.dependencies) })
    }

    @Test("on PostgreSQL: the pool, the migrations, the jobs after them, and the wire server last, after storage and what it serves with")
    func postgres() throws {
        var host = ServiceHost("test", logger: Logger(label: "test"))
        host.add("hashing", Idle())
        host.database(Idle()) {}
        host.add("notifications-client", Idle(), servesWire: false)
        host.addJob("relay", needs: ["notifications-client"], Idle())
        let graph = try host.graph(wire: Idle())
        #expect(Self.dependencies(graph) == [
            "hashing": [],
            "postgres": [],
            "migrations": ["postgres"],
            "notifications-client": [],
            "relay": ["postgres", "migrations", "notifications-client"],
            "wire": ["hashing", "postgres", "migrations"],
        ])
        #expect(graph.startOrder.last == "wire")
    }

    @Test("in memory: no storage to wait for")
    func memory() throws {
        var host = ServiceHost("test", logger: Logger(label: "test"))
        host.addJob("retention", Idle())
        let graph = try host.graph(wire: Idle())
        #expect(Self.dependencies(graph) == ["retention": [], "wire": []])
    }

    @Test("migrations that fail at first are retried until they apply")
    func migrationsRetried() async throws {
        actor Tries {
            var count = 0
            func next() -> Int { count += 1; return count }
        }
        let tries = Tries()
        var host = ServiceHost("test", logger: Logger(label: "test"))
        host.database(Idle()) {
            if await tries.next() < 3 { throw CancellationError() }
        }
        let graph = try host.graph(wire: Idle())
        guard case .setup(let migrate) = graph.components.first(where: { $0.name == "migrations" })?.role else {
            Issue.record("no migrations step")
            return
        }
        try await migrate()
        #expect(await tries.count == 3)
    }
}
