import Crypto
import Foundation
import GatewayConsole
import GatewayService
import IdentityService
import KontoContracts
import KontoMail
import KontoModel
import KontoPostgres
import KontoRuntime
import KontoWire
import Logging
import NIOCore
import NotificationService
import ProfileService
import ServiceLifecycle
import UnixSignals

/// The dev stack: Notifications, Profile, Identity and the Gateway in one process on loopback, composed as one
/// component graph (started in dependency order, stopped in reverse). In memory unless a database URL is given
/// (then every service keeps its schema in that one database). The composition root: the only place that imports
/// every service library; the services still meet only over the wire.
///
/// Each service reads its settings from ``Configuration/environment`` as its own executable reads them from the
/// process environment (docs/CONFIGURATION.md, with production's defaults); the stack then sets what makes it one stack
/// on loopback: the listen address, the ports, the shared secret, the database and the key schema.
public struct DevStack: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var gatewayPort = GatewayConfiguration.defaultPort
        public var identityPort = IdentityContract.defaultPort
        public var profilePort = ProfileContract.defaultPort
        public var notificationsPort = NotificationsContract.defaultPort
        /// nil: in memory.
        public var database: PostgresSettings?
        /// nil: the services' own (`KONTO_ACCOUNTS_CONFIG` in ``environment``, else the built-in schema).
        public var accounts: AccountConfiguration?
        /// The web console offers to continue without an account (the dev stack shows every screen) unless
        /// `KONTO_GATEWAY_CONSOLE_ANONYMOUS` says otherwise.
        public var consoleAllowsAnonymous = true
        /// The `KONTO_*` settings every service reads (rate limits, lifetimes, throttling, …); the fields above win.
        public var environment: [String: String] = [:]
        /// A root the services' keys are derived from (each service is still given only its own); nil: random keys
        /// for this run (nothing outside the process needs them).
        public var secret: String?
        /// Where mail goes when no mail server is configured (`KONTO_MAIL_SMTP_URL` unset): each mail is handed here
        /// instead of sent, and the console says so. nil: no mail, as in a deployment without a mail server.
        public var showMail: (@Sendable (DevStack.Mail) -> Void)?

        public init() {}
    }

    public let configuration: Configuration
    public let gateway: GatewayServer
    private let graph: ComponentGraph

    public init(configuration: Configuration, logger: Logger) throws {
        self.configuration = configuration
        // Each service is given only its own keys, as a deployment gives them (DeploymentKeys): derived from the
        // configured root or random for this run; no service holds the root.
        let keys = configuration.secret.map { DeploymentKeys(root: WireSecret($0)) } ?? DeploymentKeys.random()
        let host = configuration.host
        var variables = configuration.environment
        for name in ["KONTO_WIRE_SECRET", "KONTO_IDENTITY_DATA_KEY", "KONTO_MAIL_SEAL_KEY"] + DeploymentKeys.services.flatMap({
            [DeploymentKeys.keyVariable($0), DeploymentKeys.verifiersVariable($0)]
        }) {
            variables[name] = nil
        }
        for name in ["KONTO_IDENTITY_DATABASE_URL", "KONTO_PROFILE_DATABASE_URL", "KONTO_NOTIFICATIONS_DATABASE_URL"] {
            variables[name] = nil
        }
        // Passkeys work on the console's own origin (browsers allow WebAuthn on localhost, not on 127.0.0.1).
        if variables["KONTO_WEBAUTHN_RP_ID"] == nil, variables["KONTO_WEBAUTHN_ORIGINS"] == nil {
            variables["KONTO_WEBAUTHN_ORIGINS"] = "http://localhost:\(configuration.gatewayPort)"
        }
        let environment = ServiceEnvironment(variables)
        func serviceEnvironment(_ service: String) -> ServiceEnvironment {
            ServiceEnvironment(variables.merging(keys.environment(for: service)) { $1 })
        }

        var notificationsConfiguration = try NotificationServiceConfiguration(environment: serviceEnvironment(NotificationsContract.serviceName), logger: logger)
        notificationsConfiguration.host = host
        notificationsConfiguration.port = configuration.notificationsPort
        notificationsConfiguration.database = configuration.database
        let consolePath = try environment.consolePath()
        let mailNote: String?
        if notificationsConfiguration.mail == nil, let showMail = configuration.showMail {
            let publicURL = environment.string("KONTO_PUBLIC_URL") ?? "http://localhost:\(configuration.gatewayPort)"
            var mail = MailSettings(
                smtp: .init(host: "localhost", port: 25, security: .none), from: try MailAddress("konto@example.org"),
                publicURL: publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL,
                consolePath: consolePath ?? ServiceEnvironment.defaultConsolePath, concurrency: 1
            )
            mail.transport = DevStackMailTransport(show: showMail)
            notificationsConfiguration.mail = mail
            mailNote = "No mail server is configured: konto stack shows each mail's link or code in its terminal instead."
        } else {
            mailNote = nil
        }
        let notifications = try NotificationServer(configuration: notificationsConfiguration, logger: Self.logger(logger, "notifications"))

        var profileConfiguration = try ProfileServiceConfiguration(environment: serviceEnvironment(ProfileContract.serviceName), logger: logger)
        profileConfiguration.host = host
        profileConfiguration.port = configuration.profilePort
        profileConfiguration.database = configuration.database
        profileConfiguration.notificationsHost = host
        profileConfiguration.notificationsPort = configuration.notificationsPort
        if let accounts = configuration.accounts { profileConfiguration.accounts = accounts }
        let profile = try ProfileServer(configuration: profileConfiguration, logger: Self.logger(logger, "profile"))

        var identityConfiguration = try IdentityServiceConfiguration(environment: serviceEnvironment(IdentityContract.serviceName), logger: logger)
        identityConfiguration.host = host
        identityConfiguration.port = configuration.identityPort
        identityConfiguration.database = configuration.database
        identityConfiguration.profileHost = host
        identityConfiguration.profilePort = configuration.profilePort
        identityConfiguration.notificationsHost = host
        identityConfiguration.notificationsPort = configuration.notificationsPort
        if let accounts = configuration.accounts { identityConfiguration.accounts = accounts }
        let identity = try IdentityServer(configuration: identityConfiguration, logger: Self.logger(logger, "identity"))

        var gatewayConfiguration = try GatewayConfiguration(environment: serviceEnvironment(WireAllowList.gateway), logger: logger)
        gatewayConfiguration.host = host
        gatewayConfiguration.port = configuration.gatewayPort
        gatewayConfiguration.identity = .init(host: host, port: configuration.identityPort)
        gatewayConfiguration.profile = .init(host: host, port: configuration.profilePort)
        gatewayConfiguration.notifications = .init(host: host, port: configuration.notificationsPort)
        if let accounts = configuration.accounts { gatewayConfiguration.accounts = accounts }
        gatewayConfiguration.consoleMailNote = mailNote
        if environment.string("KONTO_GATEWAY_CONSOLE_ANONYMOUS") == nil {
            gatewayConfiguration.consoleAllowsAnonymous = configuration.consoleAllowsAnonymous
        }
        gateway = try GatewayServer.withConsole(configuration: gatewayConfiguration, logger: Self.logger(logger, "gateway"))
        graph = try ComponentGraph([
            // Each service is ready for the next once it listens: a client connecting to a service that has started
            // but not yet bound its socket would find it down and fail its first callers fast.
            .server("notifications", notifications) { _ = try await notifications.localAddress() },
            .server("profile", dependsOn: ["notifications"], profile) { _ = try await profile.localAddress() },
            .server("identity", dependsOn: ["profile", "notifications"], identity) { _ = try await identity.localAddress() },
            .service("gateway", dependsOn: ["identity", "profile", "notifications"], gateway),
        ])
    }

    /// Runs the stack as one ServiceGroup until SIGTERM or SIGINT shuts it down gracefully.
    public func run(logger: Logger) async throws {
        // A start that fails before the gateway runs (another service's port in use) must still end the wait for its
        // address.
        defer { gateway.endAddressWait() }
        try await serviceGroup(logger: logger, gracefulShutdownSignals: [.sigterm, .sigint]).run()
    }

    /// The stack as one ServiceGroup to run; without signals it stops on `triggerGracefulShutdown()` (a test kit, or
    /// a program that embeds the stack and handles signals itself).
    public func serviceGroup(logger: Logger, gracefulShutdownSignals: [UnixSignal] = []) -> ServiceGroup {
        var group = graph.serviceGroupConfiguration(logger: logger)
        group.gracefulShutdownSignals = gracefulShutdownSignals
        return ServiceGroup(configuration: group)
    }

    /// The key schema the services run with (the configured one, else `KONTO_ACCOUNTS_CONFIG`'s, else the built-in).
    public var accounts: AccountConfiguration { gateway.configuration.accounts }

    /// Where the console is served, nil when it is off.
    public var consolePath: String? { gateway.configuration.consolePath }

    /// Where the gateway listens, once it does.
    public func gatewayAddress() async throws -> (host: String, port: Int) {
        let address = try await gateway.localAddress()
        return (configuration.host, address.port ?? configuration.gatewayPort)
    }

    private static func logger(_ logger: Logger, _ service: String) -> Logger {
        var logger = logger
        logger[metadataKey: "konto.service"] = "\(service)"
        return logger
    }
}
