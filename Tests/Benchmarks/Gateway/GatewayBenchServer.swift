import ArgumentParser
import Foundation
import GatewayService
import KontoWire
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import UnixSignals

/// `konto-bench gateway-server`: the gateway alone in its own process for `konto-bench gateway` (so its memory is
/// its own). Prints `READY <port>` once it listens; stops on SIGTERM.
struct GatewayBenchServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway-server",
        abstract: "Run a gateway for the gateway benchmark (internal).",
        shouldDisplay: false
    )

    @Option var identityPort: Int
    @Option var profilePort: Int
    @Option var notificationsPort: Int
    @Option(help: "Wire connections to each service.") var connections: Int = 4
    @Option(help: "The account cache's time to live in milliseconds (0: off).") var cacheMs: Int = 30_000

    func run() async throws {
        let logger = {
            var logger = Logger(label: "konto.bench.gateway")
            logger.logLevel = .warning
            return logger
        }()
        var configuration = GatewayConfiguration(
            port: 0,
            secret: WireSecret(GatewayBenchmark.secret),
            identity: .init(host: "127.0.0.1", port: identityPort),
            profile: .init(host: "127.0.0.1", port: profilePort),
            notifications: .init(host: "127.0.0.1", port: notificationsPort)
        )
        configuration.rateLimitPerMinute = 0
        configuration.credentialsRateLimitPerMinute = 0
        configuration.connectionsPerService = connections
        configuration.cacheTimeToLive = .milliseconds(cacheMs)
        let server = try GatewayServer(configuration: configuration, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: server)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let address = try await server.localAddress()
            FileHandle.standardOutput.write(Data("READY \(address.port ?? 0)\n".utf8))
            try await tasks.waitForAll()
        }
    }
}
