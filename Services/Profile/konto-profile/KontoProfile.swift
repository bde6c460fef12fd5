import Foundation
import KontoModel
import KontoRuntime
import Logging
import ProfileService
import ServiceLifecycle
import UnixSignals

/// `konto-profile`: the Profile service as a process. Configuration comes from the environment
/// (README lists it); SIGTERM and SIGINT shut it down gracefully.
@main
enum KontoProfile {
    static func main() async {
        var logger = Logger(label: "konto.profile")
        do {
            let environment = ServiceEnvironment()
            logger.logLevel = try environment.logLevel("KONTO_LOG_LEVEL")
            let configuration = try ProfileServiceConfiguration(environment: environment, logger: logger)
            let server = try ProfileServer(configuration: configuration, logger: logger)
            let group = ServiceGroup(configuration: .init(
                services: [.init(service: server)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            ))
            logger.info("profile service starting", metadata: [
                "konto.host": "\(configuration.host)",
                "konto.port": "\(configuration.port)",
                "konto.storage": "\(configuration.database.map { "postgres \($0)" } ?? "memory")",
            ])
            try await group.run()
        } catch let error as ServiceEnvironmentError {
            logger.critical("invalid configuration", metadata: ["konto.error": "\(error)"])
            exit(2)
        } catch let error as AccountConfigurationError {
            logger.critical("invalid account configuration", metadata: ["konto.error": "\(error)"])
            exit(2)
        } catch {
            logger.critical("profile service failed", metadata: ["konto.error": "\(error)"])
            exit(1)
        }
    }
}
