import ArgumentParser
import Foundation
import KontoPostgres
import KontoWire
import Logging
import NIOCore
import ProfileService
import ServiceLifecycle
import UnixSignals

/// `konto-bench profile-server`: the Profile service in its own process for `konto-bench profile`.
/// Prints `READY <port>` once it listens; stops on SIGTERM.
struct ProfileBenchServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile-server",
        abstract: "Run a Profile service for the profile benchmark (internal).",
        shouldDisplay: false
    )

    @Option(help: "PostgreSQL URL.")
    var databaseURL: String

    @Option(help: "Port; 0 picks a free one.")
    var port: Int = 0

    func run() async throws {
        var logger = Logger(label: "konto.bench.profile")
        logger.logLevel = .warning
        let configuration = ProfileServiceConfiguration(
            port: self.port,
            secret: WireSecret(ProfileBenchmark.secret),
            database: try PostgresSettings(url: self.databaseURL),
            accounts: ProfileBenchmark.accounts
        )
        let server = ProfileServer(configuration: configuration, logger: logger)
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
