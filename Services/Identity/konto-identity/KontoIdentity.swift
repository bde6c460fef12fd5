import Foundation
import IdentityService
import KontoModel
import KontoRuntime
import Logging
import ServiceLifecycle
import UnixSignals

/// `konto-identity`: the Identity service as a process. Configuration comes from the environment (README lists
/// it); SIGTERM and SIGINT shut it down gracefully, its parts in reverse start order.
@main
enum KontoIdentity {
    static func main() async {
        var logger = Logger(label: "konto.identity")
        do {
            let environment = ServiceEnvironment()
            logger.logLevel = try environment.logLevel("KONTO_LOG_LEVEL")
            let configuration = try IdentityServiceConfiguration(environment: environment, logger: logger)
            let server = try IdentityServer(configuration: configuration, logger: logger)
            var group = try server.componentGraph().serviceGroupConfiguration(logger: logger)
            group.gracefulShutdownSignals = [.sigterm, .sigint]
            logger.info("identity service starting", metadata: [
                "konto.host": "\(configuration.host)",
                "konto.port": "\(configuration.port)",
                "konto.storage": "\(configuration.database.map { "postgres \($0)" } ?? "memory")",
                "konto.profile": "\(configuration.profileHost):\(configuration.profilePort)",
                "konto.argon2": "\(configuration.hashing.parameters)",
            ])
            try await ServiceGroup(configuration: group).run()
        } catch let error as ServiceEnvironmentError {
            logger.critical("invalid configuration", metadata: ["konto.error": "\(error)"])
            exit(2)
        } catch let error as AccountConfigurationError {
            logger.critical("invalid account configuration", metadata: ["konto.error": "\(error)"])
            exit(2)
        } catch {
            logger.critical("identity service failed", metadata: ["konto.error": "\(error)"])
            exit(1)
        }
    }
}
