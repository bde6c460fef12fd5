import KontoContracts
import KontoEvents
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

/// The Identity service: its PostgreSQL pool and migrations, the password-hashing pool, the Profile client, the
/// clean-up job and the wire server answering the Identity contract, as a component graph.
///
/// Start order follows the dependencies (database, migrations, hashing and Profile client before the wire server
/// listens); shutdown runs in reverse, so the wire server drains its accepted requests while the database, the
/// hashing threads and Profile are still there.
public final class IdentityServer: Service {
    public let store: IdentityStore
    private let wireServer: WireServer
    private let profileClient: WireClient
    /// The outbox relay and its Notifications client, when configured.
    private let relay: (client: WireClient, relay: OutboxRelay)?
    private let hashing: PasswordHashingPool
    private let client: PostgresClient?
    private let postgresStorage: PostgresIdentityStorage?
    private let logger: Logger
    /// The audit chain's head, served at `/metrics` when ``IdentityServiceConfiguration/metricsPort`` is set.
    public let metrics: IdentityMetrics
    private let metricsHost: String
    private let metricsPort: Int?
    private let metricsAddress = Mutex<Int?>(nil)

    /// - Throws: when the hashing parameters are unusable or the database's TLS settings cannot be used.
    public init(
        configuration: IdentityServiceConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) throws {
        let storage: any IdentityStorage
        if let database = configuration.database {
            let client = PostgresClient(configuration: try database.clientConfiguration(), eventLoopGroup: eventLoopGroup, backgroundLogger: logger)
            let postgres = PostgresIdentityStorage(client: client, logger: logger, operationTimeout: configuration.storageTimeout)
            self.client = client
            self.postgresStorage = postgres
            storage = postgres
        } else {
            self.client = nil
            self.postgresStorage = nil
            let memory = InMemoryIdentityStorage()
            if let text = configuration.options.bootstrapOperatorKey {
                _ = memory.createOperatorKey(Operators.bootstrapRecord(text, at: .now), onlyIfNone: true)
            }
            storage = memory
            logger.warning("credentials and sessions are kept in memory and lost at exit")
        }
        var profile = WireClient.Configuration(
            host: configuration.profileHost,
            port: configuration.profilePort,
            serviceName: IdentityContract.serviceName,  // who calls: Identity (the handshake proves this name)
            serverName: ProfileContract.serviceName,
            secret: configuration.secret
        )
        profile.requestTimeout = .milliseconds(configuration.profileTimeout.milliseconds)
        try profile.apply(configuration.wireTLS)
        self.profileClient = WireClient(configuration: profile, eventLoopGroup: eventLoopGroup, logger: logger)
        if let host = configuration.notificationsHost {
            var wire = WireClient.Configuration(host: host, port: configuration.notificationsPort, serviceName: IdentityContract.serviceName, serverName: NotificationsContract.serviceName, secret: configuration.secret)
            try wire.apply(configuration.wireTLS)
            let notifications = WireClient(
                configuration: wire,
                eventLoopGroup: eventLoopGroup,
                logger: logger
            )
            self.relay = (notifications, OutboxRelay(store: storage, notifications: notifications, logger: logger))
        } else {
            self.relay = nil
        }
        self.hashing = try PasswordHashingPool(configuration: configuration.hashing)
        let metrics = IdentityMetrics()
        self.metrics = metrics
        self.store = IdentityStore(
            storage: storage,
            hashing: hashing,
            profile: WireProfileProvider(client: profileClient),
            configuration: configuration.accounts,
            options: configuration.options,
            resetTokenSeal: ResetTokenSeal(secret: configuration.mailSealKey),
            factorSecrets: FactorSecretBox(secret: configuration.dataKey),
            providers: ProviderClient(providers: configuration.providers, fetcher: configuration.providerFetcher ?? HTTPProviderFetcher(), keyRefreshCooldown: configuration.options.providerKeyRefreshCooldown, logger: logger),
            providerTokens: ProviderTokenBox(secret: configuration.dataKey),
            metrics: metrics,
            logger: logger
        )
        var wire = WireServer.Configuration(
            host: configuration.host,
            port: configuration.port,
            serverName: IdentityContract.serviceName,
            verifiers: configuration.verifiers
        )
        wire.authorization = configuration.authorization
        try wire.apply(configuration.wireTLS)
        self.wireServer = WireServer(
            configuration: wire,
            eventLoopGroup: eventLoopGroup,
            logger: logger
        )
        self.logger = logger
        self.metricsHost = configuration.metricsHost
        self.metricsPort = configuration.metricsPort
        store.register(on: wireServer)
    }

    /// Where the wire server listens, once it does (port 0 picks a free one).
    public func localAddress() async throws -> SocketAddress {
        try await wireServer.localAddress()
    }

    /// The port `/metrics` is served on, once it is (nil before, or when it is not served).
    public var metricsServerPort: Int? { metricsAddress.withLock { $0 } }

    /// The parts of the service, to run as one ServiceGroup.
    public func componentGraph() throws(ComponentGraphError) -> ComponentGraph {
        var host = ServiceHost("identity", logger: logger)
        host.add("hashing", hashing)
        host.add("profile-client", profileClient)
        if let client, let postgresStorage {
            let store = store
            host.database(client) {
                try await postgresStorage.migrate(logger: self.logger)
                // After the schema, before the wire serves: the first admin call finds the key.
                try await store.installBootstrapOperatorKey()
            }
        }
        if let relay {
            host.add("notifications-client", relay.client, servesWire: false)
            host.addJob("outbox-relay", needs: ["notifications-client"], relay.relay)
        }
        // Sweeps rather than notifications: clean-ups are rare and never urgent to the second. Every replica runs them;
        // each is idempotent (`profile.delete` of nothing is fine), so replicas racing on one only repeat a delete.
        let store = store
        host.addJob("cleanup", needs: ["profile-client"], PeriodicJob(every: store.options.cleanupInterval) { await store.runCleanups() })
        // Expiry scans whole tables: far less often than the clean-ups.
        host.addJob("expiry", PeriodicJob(every: store.options.pruneInterval) { await store.pruneExpired() })
        host.addJob("audit", PeriodicJob(every: store.options.auditSealInterval) { await store.maintainAudit() })
        host.addJob("pending-work", PendingWorkDrain(work: store.pendingWork))
        if let metricsPort {
            host.add("metrics", MetricsEndpoint(exposition: { [metrics] in metrics.exposition() }, serverName: "konto-identity", host: metricsHost, port: metricsPort, logger: logger) { [self] port in
                metricsAddress.withLock { $0 = port }
            }, servesWire: false)
        }
        host.addJob("provider-revocations", PeriodicJob(every: store.options.revocationInterval, start: .immediately) { await store.runRevocations() })
        return try host.graph(wire: wireServer)
    }

    public func run() async throws {
        try await self.componentGraph().run(logger: self.logger)
    }
}
