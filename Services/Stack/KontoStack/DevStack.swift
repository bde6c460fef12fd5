import Crypto
import Foundation
import GatewayService
import IdentityService
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
public struct DevStack: Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var gatewayPort = GatewayConfiguration.defaultPort
        public var identityPort = 7401
        public var profilePort = 7402
        public var notificationsPort = 7403
        /// nil: in memory.
        public var database: PostgresSettings?
        public var accounts: AccountConfiguration = .default
        /// The web console offers to continue without an account (the dev stack shows every screen).
        public var consoleAllowsAnonymous = true
        /// The services' shared secret; nil: a random one for this run (nothing outside the process needs it).
        public var secret: String?

        public init() {}
    }

    public let configuration: Configuration
    public let gateway: GatewayServer
    private let graph: ComponentGraph

    public init(configuration: Configuration, logger: Logger) throws {
        self.configuration = configuration
        let secret = WireSecret(configuration.secret ?? Self.randomSecret())
        let host = configuration.host
        let notifications = try NotificationServer(
            configuration: NotificationServiceConfiguration(host: host, port: configuration.notificationsPort, secret: secret, database: configuration.database),
            logger: Self.logger(logger, "notifications")
        )
        let profile = try ProfileServer(
            configuration: ProfileServiceConfiguration(
                host: host, port: configuration.profilePort, secret: secret, database: configuration.database, accounts: configuration.accounts,
                notificationsHost: host, notificationsPort: configuration.notificationsPort
            ),
            logger: Self.logger(logger, "profile")
        )
        let identity = try IdentityServer(
            configuration: IdentityServiceConfiguration(
                host: host, port: configuration.identityPort, secret: secret, database: configuration.database,
                profileHost: host, profilePort: configuration.profilePort,
                notificationsHost: host, notificationsPort: configuration.notificationsPort, accounts: configuration.accounts
            ),
            logger: Self.logger(logger, "identity")
        )
        var gatewayConfiguration = GatewayConfiguration(
            host: host, port: configuration.gatewayPort, secret: secret,
            identity: .init(host: host, port: configuration.identityPort),
            profile: .init(host: host, port: configuration.profilePort),
            notifications: .init(host: host, port: configuration.notificationsPort),
            accounts: configuration.accounts
        )
        gatewayConfiguration.consoleAllowsAnonymous = configuration.consoleAllowsAnonymous
        gateway = try GatewayServer(configuration: gatewayConfiguration, logger: Self.logger(logger, "gateway"))
        graph = try ComponentGraph([
            .service("notifications", notifications),
            .service("profile", dependsOn: ["notifications"], profile),
            .service("identity", dependsOn: ["profile", "notifications"], identity),
            .service("gateway", dependsOn: ["identity", "profile", "notifications"], gateway),
        ])
    }

    /// Runs the stack as one ServiceGroup until SIGTERM or SIGINT shuts it down gracefully.
    public func run(logger: Logger) async throws {
        try await serviceGroup(logger: logger, gracefulShutdownSignals: [.sigterm, .sigint]).run()
    }

    /// The stack as one ServiceGroup to run; without signals it stops on `triggerGracefulShutdown()` (a test kit, or
    /// a program that embeds the stack and handles signals itself).
    public func serviceGroup(logger: Logger, gracefulShutdownSignals: [UnixSignal] = []) -> ServiceGroup {
        var group = graph.serviceGroupConfiguration(logger: logger)
        group.gracefulShutdownSignals = gracefulShutdownSignals
        return ServiceGroup(configuration: group)
    }

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

    private static func randomSecret() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }
}
