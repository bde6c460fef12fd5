import Logging
import ServiceLifecycle

/// Runs services for the length of a test body, then shuts them down gracefully and waits for them.
public enum RunningServices {
    public static func with<Result: Sendable>(
        _ services: [any Service],
        logger: Logger = Logger(label: "konto.testing.services"),
        _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        let group = ServiceGroup(configuration: .init(services: services.map { .init(service: $0) }, logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                let result = try await body()
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }
}
