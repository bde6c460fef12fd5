import Foundation
import KontoModel
import Logging
import ServiceLifecycle
import UnixSignals

/// What every Konto executable does in `main`: read the log level, build its parts from the environment, and run
/// them as one ServiceGroup (start in dependency order, SIGTERM or SIGINT drains them in reverse).
public enum ServiceMain {
    /// A service's parts and what to say about them when it starts.
    public struct Assembly {
        public var graph: ComponentGraph
        public var metadata: Logger.Metadata

        public init(graph: ComponentGraph, metadata: Logger.Metadata) {
            self.graph = graph
            self.metadata = metadata
        }
    }

    /// Runs the service `assemble` builds and exits when it stops: 0 after a graceful shutdown, 2 for a bad
    /// configuration (the log names the variable or file), 1 for any other failure.
    public static func run(service: String, _ assemble: @Sendable (ServiceEnvironment, Logger) throws -> Assembly) async -> Never {
        var logger = Logger(label: "konto.\(service)")
        do {
            let environment = try await ServiceEnvironment.load()
            logger.logLevel = try environment.logLevel("KONTO_LOG_LEVEL")
            let tracing = try ServiceTracing.bootstrap(service: service, logger: logger)
            let assembly = try assemble(environment, logger)
            var group = assembly.graph.serviceGroupConfiguration(logger: logger)
            if let tracing {
                // First, so it stops last: the spans of the other parts' last requests are exported before it ends.
                group.services.insert(.init(service: tracing, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup), at: 0)
            }
            group.gracefulShutdownSignals = [.sigterm, .sigint]
            logger.info("service starting", metadata: assembly.metadata.merging(["konto.service": "\(service)"]) { $1 })
            try await ServiceGroup(configuration: group).run()
            exit(0)
        } catch let error as ServiceEnvironmentError {
            logger.critical("invalid configuration", metadata: ["konto.error": "\(error)"])
            exit(2)
        } catch let error as AccountConfigurationError {
            logger.critical("invalid account configuration", metadata: ["konto.error": "\(error)"])
            exit(2)
        } catch {
            logger.critical("service failed", metadata: ["konto.service": "\(service)", "konto.error": "\(error)"])
            exit(1)
        }
    }
}
