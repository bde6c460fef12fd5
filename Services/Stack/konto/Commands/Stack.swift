import ArgumentParser
import KontoClient
import Foundation
import KontoPostgres
import KontoRuntime
import KontoStack
import Logging

/// `konto stack`: every service in this process on loopback, in memory or on one PostgreSQL database.
struct Stack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run Identity, Profile, Notifications and the Gateway in one process on loopback (Ctrl-C stops it)."
    )

    @Option(help: "PostgreSQL for every service (postgres://user:password@host:port/db); in memory when absent.")
    var databaseURL: String?
    @Option(help: "The gateway's HTTP port.") var port = 8080
    @Option(help: "Identity's wire port.") var identityPort = 7401
    @Option(help: "Profile's wire port.") var profilePort = 7402
    @Option(help: "Notifications' wire port.") var notificationsPort = 7403
    @Option(help: "The deployment's key schema (.yaml or .json, e.g. deploy/accounts.yaml); the built-in one when absent.")
    var accounts: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical.") var logLevel = "warning"

    func validate() throws {
        for port in [port, identityPort, profilePort, notificationsPort] where !(1...65_535).contains(port) {
            throw ValidationError("ports are 1 to 65535")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown log level '\(logLevel)'") }
    }

    func run() async throws {
        let started = ContinuousClock.now
        let logger = {
            var logger = Logger(label: "konto.stack")
            logger.logLevel = Logger.Level(rawValue: logLevel) ?? .warning
            return logger
        }()
        var configuration = DevStack.Configuration()
        configuration.gatewayPort = port
        configuration.identityPort = identityPort
        configuration.profilePort = profilePort
        configuration.notificationsPort = notificationsPort
        // A secret of the caller's (to reach the services with `konto health --wire`, say); else a random one.
        let environment = ServiceEnvironment()
        if environment.string("KONTO_WIRE_SECRET") != nil {
            // Checked as the services check it: long, random-looking, no placeholder.
            do {
                configuration.secret = try environment.secret("KONTO_WIRE_SECRET")
            } catch {
                throw ValidationError("\(error)")
            }
        }
        if let databaseURL {
            do {
                configuration.database = try PostgresSettings(url: databaseURL)
            } catch {
                throw ValidationError("--database-url is not a usable PostgreSQL URL: \(error)")
            }
        }
        if let accounts {
            configuration.accounts = try AccountConfigurationLoader(logger: logger).load(path: accounts)
        }
        let stack = try DevStack(configuration: configuration, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await stack.run(logger: logger) }
            let address = try await stack.gatewayAddress()
            let url = "http://\(address.host):\(address.port)"
            let storage = databaseURL == nil ? "in memory" : "on PostgreSQL"
            let milliseconds = Int((ContinuousClock.now - started) / .milliseconds(1))
            let banner = """
                Konto is running \(storage) at \(url) (ready in \(milliseconds) ms)
                  OpenAPI document: \(url)/openapi.json
                  account console: \(url)/account/
                  try: curl -s \(url)/v1/accounts -H 'Content-Type: application/json' -d '{"userId":"ada@example.org","password":"correct horse battery"}'
                Ctrl-C stops it.

                """
            FileHandle.standardOutput.write(Data(banner.utf8))
            try await tasks.waitForAll()
        }
    }
}
