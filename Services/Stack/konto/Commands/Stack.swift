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
    // Every setting docs/CONFIGURATION.md names is read from the environment as the services read it; an option given
    // here wins over its variable.
    @Option(help: "The gateway's HTTP port (else KONTO_GATEWAY_PORT, else 8080).") var port: Int?
    @Option(help: "Identity's wire port (else KONTO_IDENTITY_PORT, else 7401).") var identityPort: Int?
    @Option(help: "Profile's wire port (else KONTO_PROFILE_PORT, else 7402).") var profilePort: Int?
    @Option(help: "Notifications' wire port (else KONTO_NOTIFICATIONS_PORT, else 7403).") var notificationsPort: Int?
    @Option(help: "The deployment's key schema (.yaml or .json, e.g. deploy/accounts.yaml); else KONTO_ACCOUNTS_CONFIG, else the built-in one.")
    var accounts: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical (else KONTO_LOG_LEVEL, else warning).") var logLevel: String?

    func validate() throws {
        for port in [port, identityPort, profilePort, notificationsPort].compactMap({ $0 }) where !(1...65_535).contains(port) {
            throw ValidationError("ports are 1 to 65535")
        }
        if let logLevel, Logger.Level(rawValue: logLevel) == nil { throw ValidationError("unknown log level '\(logLevel)'") }
    }

    func run() async throws {
        let started = ContinuousClock.now
        let environment = ServiceEnvironment()
        // The stack's one deliberate difference from production: warnings only, so its banner stays readable.
        var level = Logger.Level.warning
        if let logLevel {
            level = Logger.Level(rawValue: logLevel) ?? .warning
        } else {
            do {
                level = try environment.logLevel("KONTO_LOG_LEVEL", default: .warning)
            } catch {
                throw ValidationError("\(error)")
            }
        }
        let logger = {
            var logger = Logger(label: "konto.stack")
            logger.logLevel = level
            return logger
        }()
        var configuration = DevStack.Configuration()
        configuration.environment = ProcessInfo.processInfo.environment.filter { $0.key.hasPrefix("KONTO_") }
        do {
            configuration.gatewayPort = try port ?? environment.port("KONTO_GATEWAY_PORT", default: configuration.gatewayPort)
            configuration.identityPort = try identityPort ?? environment.port("KONTO_IDENTITY_PORT", default: configuration.identityPort)
            configuration.profilePort = try profilePort ?? environment.port("KONTO_PROFILE_PORT", default: configuration.profilePort)
            configuration.notificationsPort = try notificationsPort ?? environment.port("KONTO_NOTIFICATIONS_PORT", default: configuration.notificationsPort)
        } catch {
            throw ValidationError("\(error)")
        }
        // A secret of the caller's (to reach the services with `konto health --wire`, say); else a random one.
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
