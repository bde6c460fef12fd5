import Foundation
import KontoModel
import KontoRuntime
import Logging
import ProfileService
import ServiceLifecycle
import UnixSignals

/// `konto-profile`: the Profile service as a process. Configuration comes from the environment
/// (README lists it); SIGTERM and SIGINT shut it down gracefully, its parts in reverse start order.
@main
enum KontoProfile {
    static func main() async {
        var logger = Logger(label: "konto.profile")
        do {
            let environment = ServiceEnvironment()
            logger.logLevel = try environment.logLevel("KONTO_LOG_LEVEL")
            let configuration = try ProfileServiceConfiguration(environment: environment, logger: logger)
            let server = try ProfileServer(configuration: configuration, logger: logger)
            // One group of the service's parts: on SIGTERM the wire server drains before the database closes.
            var group = try server.componentGraph().serviceGroupConfiguration(logger: logger)
            group.gracefulShutdownSignals = [.sigterm, .sigint]
            logger.info("profile service starting", metadata: [
                "konto.host": "\(configuration.host)",
                "konto.port": "\(configuration.port)",
                "konto.storage": "\(configuration.database.map { "postgres \($0)" } ?? "memory")",
            ])
            try await ServiceGroup(configuration: group).run()
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
