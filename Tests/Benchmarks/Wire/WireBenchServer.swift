import ArgumentParser
import Foundation
import KontoWire
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import UnixSignals

/// The server side of the wire benchmark, run as its own process (as redis-server is).
struct WireBenchServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wire-server",
        abstract: "Serve the benchmark's echo method until SIGTERM/SIGINT (used by `wire`).",
        shouldDisplay: false
    )

    @Option(help: "Port to listen on (0 picks one; the chosen port is printed).")
    var port: Int = 0

    @Option(help: "Event loop threads.")
    var threads: Int = System.coreCount

    @Option(help: "Where handlers run: global or event-loop.")
    var handlers: String = "global"

    @Option(help: "Serve TLS with this certificate (PEM), with --tls-key.")
    var tlsCert: String?

    @Option(help: "The certificate's private key (PEM).")
    var tlsKey: String?

    func run() async throws {
        var logger = Logger(label: "konto.bench.wire-server")
        logger.logLevel = .warning
        let group = MultiThreadedEventLoopGroup(numberOfThreads: self.threads)
        var configuration = WireServer.Configuration(
            port: self.port,
            serverName: "bench",
            secret: WireSecret(WireBenchmark.secret)
        )
        configuration.maxInFlightPerConnection = 256
        configuration.shutdownGracePeriod = .seconds(2)
        configuration.handlerExecution = self.handlers == "event-loop" ? .eventLoop : .globalExecutor
        // Authorization on, as in every Konto service: the load generator's name may call the echo, no one else.
        configuration.authorization = WireAuthorization([WireLoadGenerator.Target.defaultServiceName: [WireBenchmark.method]])
        if self.tlsCert != nil || self.tlsKey != nil {
            try configuration.apply(WireTLS(certificatePath: self.tlsCert, privateKeyPath: self.tlsKey))
        }
        let server = WireServer(configuration: configuration, eventLoopGroup: group, logger: logger)
        server.registerRaw(WireBenchmark.method) { payload, _ in payload }
        let serviceGroup = ServiceGroup(configuration: .init(
            services: [.init(service: server)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await serviceGroup.run() }
            let address = try await server.localAddress()
            // Unbuffered, so the parent sees it while we keep running.
            FileHandle.standardOutput.write(Data("READY \(address.port ?? 0)\n".utf8))
            try await tasks.waitForAll()
        }
        try await group.shutdownGracefully()
    }
}
