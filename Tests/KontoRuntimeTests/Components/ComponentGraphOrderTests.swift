import KontoRuntime
import ServiceLifecycle
import Testing

@Suite("Component graph: order and refusals")
struct ComponentGraphOrderTests {
    /// A service that is never run: these tests only build graphs.
    struct Idle: Service {
        func run() async throws {}
    }

    static func component(_ name: String, _ dependencies: [String] = []) -> Component {
        .service(name, dependsOn: dependencies, Idle())
    }

    @Test("the start order puts dependencies first; declaration order breaks ties")
    func startOrder() throws {
        let graph = try ComponentGraph([
            Self.component("wire", ["postgres", "migrations"]),
            Self.component("metrics"),
            Self.component("migrations", ["postgres"]),
            Self.component("postgres"),
            Self.component("health", ["wire"]),
        ])
        #expect(graph.startOrder == ["metrics", "postgres", "migrations", "wire", "health"])
    }

    @Test("independent components keep their declared order")
    func stableTies() throws {
        let graph = try ComponentGraph([Self.component("c"), Self.component("a"), Self.component("b")])
        #expect(graph.startOrder == ["c", "a", "b"])
    }

    @Test("a cycle is refused and named", arguments: [
        ([("a", ["c"]), ("b", ["a"]), ("c", ["b"]), ("d", [])], ["a", "c", "b", "a"]),
        ([("x", ["x"])], ["x", "x"]),
        // Reached through a component outside it, which is left out of the cycle.
        ([("e", ["f"]), ("f", ["g"]), ("g", ["f"])], ["f", "g", "f"]),
    ])
    func cycle(declared: [(String, [String])], cycle: [String]) {
        let error = #expect(throws: ComponentGraphError.self) {
            try ComponentGraph(declared.map { Self.component($0.0, $0.1) })
        }
        #expect(error?.code == .dependencyCycle)
        #expect(error?.components == cycle)
        #expect(error?.description == "runtime.dependencyCycle: components depend on each other in a cycle: \(cycle.joined(separator: " -> "))")
    }

    @Test("a dependency on an undeclared name is refused")
    func unknownDependency() {
        let error = #expect(throws: ComponentGraphError.self) {
            try ComponentGraph([Self.component("postgres"), Self.component("wire", ["postgres", "migrations"])])
        }
        #expect(error?.code == .unknownDependency)
        #expect(error?.components == ["wire", "migrations"])
        #expect(error?.message == "component \"wire\" depends on \"migrations\", which is not declared")
    }

    @Test("a name declared twice is refused")
    func duplicate() {
        let error = #expect(throws: ComponentGraphError.self) {
            try ComponentGraph([Self.component("postgres"), Self.component("wire"), Self.component("postgres")])
        }
        #expect(error?.code == .duplicateComponent)
        #expect(error?.components == ["postgres"])
    }
}
