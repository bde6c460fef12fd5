import ArgumentParser
import Foundation
import KontoModel
import KontoPostgres
import KontoWire
import Logging
import NIOCore
import NIOPosix
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

    @Option(help: "PostgreSQL URL; without one, details are kept in memory (a diagnostic baseline).")
    var databaseURL: String?

    @Option(help: "Seed this many accounts into in-memory storage.")
    var memoryRows: Int = 0

    @Option(help: "Port; 0 picks a free one.")
    var port: Int = 0

    @Option(help: "Event loop threads of the service (wire server and PostgreSQL pool).")
    var threads: Int = System.coreCount

    func run() async throws {
        var logger = Logger(label: "konto.bench.profile")
        logger.logLevel = .warning
        let configuration = ProfileServiceConfiguration(
            port: self.port,
            secret: WireSecret(ProfileBenchmark.secret),
            database: try self.databaseURL.map { try PostgresSettings(url: $0) },
            accounts: ProfileBenchmark.accounts
        )
        let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let server = try ProfileServer(configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger)
        for row in stride(from: 1, through: memoryRows, by: 1) {
            var details = AccountDetails()
            details[\.name] = PersonName(givenName: "User \(row)", familyName: "Bench")
            details[\.dateOfBirth] = CalendarDate(year: 1990, month: 1, day: 1)
            details[\.email] = "user\(row)@example.com"
            details[\.phoneNumbers] = ["+41 44 000 00 00"]
            _ = try await server.store.create(accountId: "acc-\(row)", details: details)
        }
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
