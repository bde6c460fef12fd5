import Logging
import ServiceLifecycle

/// A component as one entry of the ServiceGroup: waits for its dependencies, runs, and returns only once the group
/// asks it to stop (or cancels it), so the group's reverse-order shutdown is the only way parts stop.
struct ComponentService: Service, CustomStringConvertible {
    let component: Component
    let dependencies: [ComponentReadiness]
    let readiness: ComponentReadiness
    let logger: Logger

    var description: String { self.component.name }

    func run() async throws {
        var logger = self.logger
        logger[metadataKey: "konto.component"] = "\(self.component.name)"
        for dependency in self.dependencies {
            // Stopped before its dependencies were ready: it never starts.
            guard await dependency.wait() else { return }
        }
        switch self.component.role {
        case .service(let service):
            logger.debug("component starting")
            self.readiness.markReady()
            try await service.run()
            guard Task.isShuttingDownGracefully || Task.isCancelled else {
                throw ComponentGraphError.finishedUnexpectedly(self.component.name)
            }
            logger.debug("component stopped")
        case .server(let service, let listening):
            logger.debug("component starting")
            // The probe runs beside the server: a server that stops before it listens never becomes ready (its
            // group is ending then), and a probe still waiting when the server has stopped is told to give up.
            let readiness = self.readiness
            let probe = Task {
                guard (try? await listening()) != nil, !Task.isCancelled else { return }
                readiness.markReady()
            }
            defer { probe.cancel() }
            try await service.run()
            guard Task.isShuttingDownGracefully || Task.isCancelled else {
                throw ComponentGraphError.finishedUnexpectedly(self.component.name)
            }
            logger.debug("component stopped")
        case .setup(let body):
            logger.debug("component setup starting")
            do {
                try await cancelWhenGracefulShutdown(body)
            } catch where Task.isShuttingDownGracefully || Task.isCancelled {
                logger.debug("component setup stopped before it finished")
                return
            }
            guard !Task.isShuttingDownGracefully, !Task.isCancelled else { return }
            logger.debug("component setup finished")
            self.readiness.markReady()
            // Holds its place in the group: a setup step that returned would end the group, and its dependants
            // must stop before it does.
            try? await gracefulShutdown()
        }
    }
}
