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
        // Without a mail server each mail's link or code is shown here, beside the banner.
        configuration.showMail = { mail in
            var text = "mail to \(mail.to): \(mail.subject)\n"
            if let link = mail.link { text += "  \(link)\n" }
            if let code = mail.code { text += "  code: \(code)\n" }
            FileHandle.standardOutput.write(Data(text.utf8))
        }
        let stack = try DevStack(configuration: configuration, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await stack.run(logger: logger) }
            let address: (host: String, port: Int)
            do {
                address = try await stack.gatewayAddress()
            } catch {
                // The gateway never listened: the stack stopped while starting, either failing (a port in use: the
                // run's ListenError names it, and the process exits non-zero) or on SIGINT/SIGTERM (it returns).
                try await tasks.waitForAll()
                return
            }
            FileHandle.standardOutput.write(Data(Self.banner(
                port: address.port, storage: databaseURL == nil ? "in memory" : "on PostgreSQL",
                milliseconds: Int((ContinuousClock.now - started) / .milliseconds(1)),
                consolePath: stack.consolePath, example: SignUpExample.json(for: stack.accounts),
                mailShown: environment.string("KONTO_MAIL_SMTP_URL") == nil
            ).utf8))
            try await tasks.waitForAll()
        }
    }

    /// What the stack prints once it serves: where, with a sign-up the configured schema accepts, at `localhost`
    /// (the passkeys' relying party: a browser refuses WebAuthn at 127.0.0.1), and what the CLI needs to find it.
    static func banner(port: Int, storage: String, milliseconds: Int, consolePath: String?, example: String?, mailShown: Bool) -> String {
        let url = "http://localhost:\(port)"
        var lines = [
            "Konto is running \(storage) at \(url) (ready in \(milliseconds) ms)",
            "  OpenAPI document: \(url)/openapi.json",
        ]
        if let consolePath { lines.append("  account console:  \(url)\(consolePath)/") }
        if let example {
            // Single-quoted for the shell; a quote in the JSON closes, escapes and reopens it.
            let quoted = example.replacingOccurrences(of: "'", with: "'\\''")
            lines.append("  try: curl -s \(url)/v1/accounts -H 'Content-Type: application/json' -d '\(quoted)'")
        } else {
            lines.append("  sign up: POST \(url)/v1/accounts with the keys GET \(url)/v1/schema requires")
        }
        if port != DevStack.Configuration().gatewayPort {
            lines.append("  for the CLI: export KONTO_GATEWAY=\(url)")
        }
        if mailShown {
            lines.append("  no mail server (KONTO_MAIL_SMTP_URL): each mail's link or code is shown here instead")
        }
        lines.append("Ctrl-C stops it.")
        return lines.joined(separator: "\n") + "\n\n"
    }
}
