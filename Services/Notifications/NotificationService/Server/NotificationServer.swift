import KontoContracts
import KontoMetrics
import KontoModel
import KontoPostgres
import KontoRuntime
import KontoWire
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// The Notifications service: its PostgreSQL pool and migrations and the wire server answering the Notifications
/// contract, as a component graph (database and migrations before the wire server listens; reverse at shutdown).
public final class NotificationServer: Service {
    public let store: NotificationStore
    private let wireServer: WireServer
    private let client: PostgresClient?
    private let postgresStorage: PostgresNotificationStorage?
    private let webhooks: WebhookDispatcher
    private let courier: MailCourier?
    /// What the courier counts, served at `/metrics` when ``NotificationServiceConfiguration/metricsPort`` is set.
    public let metrics = NotificationMetrics()
    private let metricsPort: Int?
    private let metricsHost: String
    private let metricsAddress = Mutex<Int?>(nil)
    private let logger: Logger

    /// - Throws: when the database's TLS settings cannot be used, or a webhook endpoint has problems
    ///   (``WebhookEndpoint/problems(_:)``).
    public init(
        configuration: NotificationServiceConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) throws {
        self.metricsPort = configuration.metricsPort
        self.metricsHost = configuration.metricsHost
        // However the endpoints were configured (a file, or code): an unusable one refuses the start, not each delivery.
        try WebhookEndpoint.check(configuration.webhooks)
        let storage: any NotificationStorage
        if let database = configuration.database {
            let client = PostgresClient(configuration: try database.clientConfiguration(), eventLoopGroup: eventLoopGroup, backgroundLogger: logger)
            let postgres = PostgresNotificationStorage(client: client, logger: logger)
            self.client = client
            self.postgresStorage = postgres
            storage = postgres
        } else {
            self.client = nil
            self.postgresStorage = nil
            storage = InMemoryNotificationStorage()
            logger.warning("events are kept in memory and lost at exit")
        }
        let webhookSettings = WebhookSettings(
            fileEndpoints: configuration.webhooks, secretSeal: WebhookSecretSeal(secret: configuration.mailSealKey),
            allowsLocalEndpoints: configuration.allowsLocalWebhooks, reloadInterval: configuration.webhookReloadInterval,
            maxStoredEndpoints: configuration.maxStoredWebhooks
        )
        self.store = NotificationStore(storage: storage, options: configuration.options, ownership: configuration.ownership, webhooks: webhookSettings, logger: logger)
        var wire = WireServer.Configuration(
            host: configuration.host,
            port: configuration.port,
            serverName: NotificationsContract.serviceName,
            verifiers: configuration.verifiers
        )
        wire.authorization = configuration.authorization
        try wire.apply(configuration.wireTLS)
        self.wireServer = WireServer(
            configuration: wire,
            eventLoopGroup: eventLoopGroup,
            logger: logger
        )
        var webhooks = WebhookDispatcher.Configuration()
        webhooks.resetTokenSeal = ResetTokenSeal(secret: configuration.mailSealKey)
        self.webhooks = WebhookDispatcher(store: store, configuration: webhooks, logger: logger)
        if let mail = configuration.mail {
            self.courier = try MailCourier(store: store, settings: mail, seal: ResetTokenSeal(secret: configuration.mailSealKey), metricsFactory: metrics.factory, logger: logger)
        } else {
            self.courier = nil
        }
        self.logger = logger
        store.register(on: wireServer)
    }

    /// Where the wire server listens, once it does (port 0 picks a free one).
    public func localAddress() async throws -> SocketAddress {
        try await wireServer.localAddress()
    }

    /// The parts of the service, to run as one ServiceGroup.
    public func componentGraph() throws(ComponentGraphError) -> ComponentGraph {
        var host = ServiceHost("notifications", logger: logger)
        if let client, let postgresStorage {
            host.database(client) { try await postgresStorage.migrate(logger: self.logger) }
        }
        host.addJob("published-watch", PublishedWatcher(store: store, logger: logger))
        host.addJob("webhooks", webhooks)
        if let courier {
            host.addJob("mail", courier)
        }
        // A sweep: an erasure waits for the groups anyway, and retention counts in days.
        let store = store
        host.addJob("retention", PeriodicJob(every: store.options.sweepInterval) { await store.sweep() })
        if let metricsPort {
            host.add("metrics", MetricsEndpoint(exposition: { [metrics] in metrics.exposition() }, serverName: "konto-notifications", host: metricsHost, port: metricsPort, logger: logger) { [self] port in
                metricsAddress.withLock { $0 = port }
            }, servesWire: false)
        }
        return try host.graph(wire: wireServer)
    }

    public func run() async throws {
        try await self.componentGraph().run(logger: self.logger)
    }

    /// The port `/metrics` is served on, once it is (nil before, or when it is not served).
    public var metricsServerPort: Int? { metricsAddress.withLock { $0 } }
}
