import KontoWire
import Logging
import PostgresNIO
import ProfileService
import ServiceLifecycle
import Synchronization

/// A real Profile service that a test stops and starts again on the same port, so that Identity's client sees it go
/// away and come back (a contract example's `profileDown`). In memory, a restart starts with no data.
final class RestartableProfile: Sendable {
    private let configuration: Mutex<ProfileServiceConfiguration>
    private let running = Mutex<(group: ServiceGroup, task: Task<Void, any Error>)?>(nil)
    private let logger: Logger

    /// Where it listens (a free port, chosen at its first start).
    var port: Int { configuration.withLock { $0.port } }

    private init(configuration: ProfileServiceConfiguration, logger: Logger) {
        self.configuration = Mutex(configuration)
        self.logger = logger
    }

    /// A started Profile on a free port.
    static func start(_ configuration: ProfileServiceConfiguration, logger: Logger) async throws -> RestartableProfile {
        let profile = RestartableProfile(configuration: configuration, logger: logger)
        try await profile.start()
        return profile
    }

    /// Starts it (again, on the same port) and returns once it listens.
    func start() async throws {
        let server = try ProfileServer(configuration: configuration.withLock { $0 }, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [.init(service: server)], logger: logger))
        let task = Task { try await group.run() }
        running.withLock { $0 = (group, task) }
        let port = try await server.localAddress().port!
        configuration.withLock { $0.port = port }
    }

    /// Stops it gracefully and waits until it has.
    func stop() async throws {
        guard let (group, task) = running.withLock({ running in defer { running = nil }; return running }) else { return }
        await group.triggerGracefulShutdown()
        try await task.value
    }
}
