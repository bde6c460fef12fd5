import KontoRuntime
import Logging
import ServiceLifecycle
import Testing

@Suite("Component graph: start and shutdown")
struct ComponentGraphLifecycleTests {
    static let logger = Logger(label: "konto.runtime.test")

    static func group(_ graph: ComponentGraph) -> ServiceGroup {
        ServiceGroup(configuration: graph.serviceGroupConfiguration(logger: logger))
    }

    @Test("parts stop in reverse start order, each only after its dependants have finished")
    func reverseShutdown() async throws {
        let events = ComponentEvents()
        let wireStop = TestGate()
        let graph = try ComponentGraph([
            .service("wire", dependsOn: ["postgres", "reads", "migrations"], RecordingService(name: "wire", events: events, stopGate: wireStop)),
            .service("postgres", RecordingService(name: "postgres", events: events)),
            .service("reads", RecordingService(name: "reads", events: events)),
            .setup("migrations", dependsOn: ["postgres"]) { events.record("migrations done") },
        ])
        #expect(graph.startOrder == ["postgres", "reads", "migrations", "wire"])
        let group = Self.group(graph)
        async let running: Void = group.run()
        try await events.waitFor("wire started")
        await group.triggerGracefulShutdown()
        try await events.waitFor("wire stopping")
        // The wire part is still draining: nothing it uses may be asked to stop yet.
        #expect(!events.contains("reads stopping"))
        #expect(!events.contains("postgres stopping"))
        wireStop.open()
        try await running
        #expect(events.since("wire stopping") == [
            "wire stopping", "wire stopped",
            "reads stopping", "reads stopped",
            "postgres stopping", "postgres stopped",
        ])
        #expect(events.index(of: "migrations done")! < events.index(of: "wire started")!)
    }

    @Test("a dependant starts only once its setup step has finished")
    func setupGatesDependants() async throws {
        let events = ComponentEvents()
        let migrationsDone = TestGate()
        let graph = try ComponentGraph([
            .service("postgres", RecordingService(name: "postgres", events: events)),
            .setup("migrations", dependsOn: ["postgres"]) {
                events.record("migrations running")
                await migrationsDone.wait()
                events.record("migrations done")
            },
            .service("wire", dependsOn: ["migrations"], RecordingService(name: "wire", events: events)),
        ])
        let group = Self.group(graph)
        async let running: Void = group.run()
        try await events.waitFor("migrations running")
        #expect(!events.contains("wire started"))
        migrationsDone.open()
        try await events.waitFor("wire started")
        #expect(events.index(of: "migrations done")! < events.index(of: "wire started")!)
        await group.triggerGracefulShutdown()
        try await running
        #expect(events.since("wire stopping") == ["wire stopping", "wire stopped", "postgres stopping", "postgres stopped"])
    }

    @Test("a shutdown during a setup step stops it, and its dependants never start", arguments: [true, false])
    func shutdownDuringSetup(setupThrowsWhenCancelled: Bool) async throws {
        let events = ComponentEvents()
        let never = TestGate()
        let graph = try ComponentGraph([
            .service("postgres", RecordingService(name: "postgres", events: events)),
            .setup("migrations", dependsOn: ["postgres"]) {
                events.record("migrations running")
                // Ends only by cancellation, as a migration retrying against an unreachable database does.
                await never.wait()
                if setupThrowsWhenCancelled {
                    try Task.checkCancellation()
                }
            },
            .service("wire", dependsOn: ["migrations"], RecordingService(name: "wire", events: events)),
        ])
        let group = Self.group(graph)
        async let running: Void = group.run()
        try await events.waitFor("migrations running")
        await group.triggerGracefulShutdown()
        try await running
        #expect(!events.contains("wire started"))
        #expect(events.since("postgres stopping") == ["postgres stopping", "postgres stopped"])
    }

    @Test("a server's dependants start once it listens, not when it starts")
    func serverGatesDependantsUntilListening() async throws {
        let events = ComponentEvents()
        let bound = TestGate()
        let graph = try ComponentGraph([
            .server("identity", RecordingService(name: "identity", events: events)) {
                await bound.wait()
                events.record("identity listening")
            },
            .service("gateway", dependsOn: ["identity"], RecordingService(name: "gateway", events: events)),
        ])
        let group = Self.group(graph)
        async let running: Void = group.run()
        try await events.waitFor("identity started")
        bound.open()
        try await events.waitFor("gateway started")
        #expect(events.index(of: "identity listening")! < events.index(of: "gateway started")!)
        await group.triggerGracefulShutdown()
        try await running
        #expect(events.since("gateway stopping") == ["gateway stopping", "gateway stopped", "identity stopping", "identity stopped"])
    }

    @Test("a server shut down before it listens: its dependants never start and the group still ends")
    func serverNeverListening() async throws {
        let events = ComponentEvents()
        let never = TestGate()
        let graph = try ComponentGraph([
            .server("identity", RecordingService(name: "identity", events: events)) { await never.wait() },
            .service("gateway", dependsOn: ["identity"], RecordingService(name: "gateway", events: events)),
        ])
        let group = Self.group(graph)
        async let running: Void = group.run()
        try await events.waitFor("identity started")
        await group.triggerGracefulShutdown()
        try await running
        #expect(!events.contains("gateway started"))
        #expect(events.since("identity stopping") == ["identity stopping", "identity stopped"])
    }

    @Test("a failing setup step shuts the rest down and the group throws its error")
    func failingSetup() async throws {
        let events = ComponentEvents()
        let graph = try ComponentGraph([
            .service("postgres", RecordingService(name: "postgres", events: events)),
            .setup("migrations", dependsOn: ["postgres"]) { throw SetupFailure() },
            .service("wire", dependsOn: ["migrations"], RecordingService(name: "wire", events: events)),
        ])
        await #expect(throws: SetupFailure.self) {
            try await Self.group(graph).run()
        }
        #expect(!events.contains("wire started"))
        #expect(events.since("postgres stopping") == ["postgres stopping", "postgres stopped"])
    }

    @Test("a service that stops on its own is reported, and the rest shut down")
    func serviceFinishedUnexpectedly() async throws {
        let events = ComponentEvents()
        let graph = try ComponentGraph([
            .service("postgres", RecordingService(name: "postgres", events: events)),
            .service("worker", dependsOn: ["postgres"], RecordingService(name: "worker", events: events, returnsAtOnce: true)),
        ])
        let error = await #expect(throws: ComponentGraphError.self) {
            try await Self.group(graph).run()
        }
        #expect(error?.code == .finishedUnexpectedly)
        #expect(error?.components == ["worker"])
        #expect(events.since("postgres stopping") == ["postgres stopping", "postgres stopped"])
    }

    /// A graph run as one service of an outer group, as an in-process server is.
    struct GraphService: Service {
        let graph: ComponentGraph

        func run() async throws {
            try await self.graph.run(logger: ComponentGraphLifecycleTests.logger)
        }
    }

    @Test("a graph inside another group stops in reverse order on the outer group's shutdown")
    func nested() async throws {
        let events = ComponentEvents()
        let graph = try ComponentGraph([
            .service("wire", dependsOn: ["postgres"], RecordingService(name: "wire", events: events)),
            .service("postgres", RecordingService(name: "postgres", events: events)),
        ])
        let outer = ServiceGroup(configuration: .init(services: [.init(service: GraphService(graph: graph))], logger: Self.logger))
        async let running: Void = outer.run()
        try await events.waitFor("wire started")
        await outer.triggerGracefulShutdown()
        try await running
        #expect(events.since("wire stopping") == ["wire stopping", "wire stopped", "postgres stopping", "postgres stopped"])
    }
}
