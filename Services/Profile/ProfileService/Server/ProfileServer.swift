import KontoContracts
import KontoEvents
import KontoModel
import KontoPostgres
import KontoRuntime
import KontoWire
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ServiceLifecycle

/// The Profile service: its PostgreSQL pool, migrations, and the wire server that answers
/// the Profile contract, as a component graph (``componentGraph()``) or one ServiceLifecycle service.
///
/// An unreachable database at start does not stop it: it retries the migrations with backoff
/// while the wire server is not yet listening (callers fail fast with `wire.serviceUnavailable`);
/// later outages are the store's to report (`profile.storageUnavailable`).
public final class ProfileServer: Service {
    public let store: ProfileStore
    private let wireServer: WireServer
    private let client: PostgresClient?
    private let postgresStorage: PostgresProfileStorage?
    /// With Notifications configured: its client, the `deletingAccount` consumer and the outbox relay
    /// (`detailsChanged`).
    private let events: (client: WireClient, consumer: EventConsumer, relay: OutboxRelay)?
    private let logger: Logger

    /// Profile's consumer group for account deletions.
    public static let deletionGroup = "profile.deletions"

    /// - Parameter eventLoopGroup: runs the wire server and the PostgreSQL pool; loads are batched
    ///   per loop of it.
    /// - Throws: when the database's TLS settings cannot be used (an unreadable `sslrootcert`).
    public init(
        configuration: ProfileServiceConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) throws {
        var wire = WireServer.Configuration(
            host: configuration.host,
            port: configuration.port,
            serverName: ProfileContract.serviceName,
            verifiers: configuration.verifiers
        )
        wire.authorization = configuration.authorization
        // Profile handlers only await the database and do small JSON work, so they may run on the
        // connection's event loop and save the hops to and from the global executor.
        wire.handlerExecution = .eventLoop
        wire.shutdownGracePeriod = .milliseconds(configuration.shutdownGracePeriod.milliseconds)
        let storage: any ProfileStorage
        if let database = configuration.database {
            let client = PostgresClient(
                configuration: PostgresProfileStorage.clientConfiguration(try database.clientConfiguration()),
                eventLoopGroup: eventLoopGroup,
                backgroundLogger: logger
            )
            let postgres = PostgresProfileStorage(client: client, eventLoopGroup: eventLoopGroup, logger: logger)
            self.client = client
            self.postgresStorage = postgres
            storage = postgres
        } else {
            self.client = nil
            self.postgresStorage = nil
            storage = InMemoryProfileStorage()
            logger.warning("profile details are kept in memory and lost at exit")
        }
        self.store = ProfileStore(storage: storage, configuration: configuration.accounts, options: configuration.store, logger: logger)
        try wire.apply(configuration.wireTLS)
        self.wireServer = WireServer(configuration: wire, eventLoopGroup: eventLoopGroup, logger: logger)
        if let host = configuration.notificationsHost {
            var notifications = WireClient.Configuration(host: host, port: configuration.notificationsPort, serviceName: ProfileContract.serviceName, serverName: NotificationsContract.serviceName, secret: configuration.secret)
            try notifications.apply(configuration.wireTLS)
            let client = WireClient(
                configuration: notifications,
                eventLoopGroup: eventLoopGroup,
                logger: logger
            )
            let store = self.store
            let consumer = EventConsumer(
                client: client,
                configuration: EventConsumer.Configuration(group: Self.deletionGroup, types: ["deletingAccount"]),
                logger: logger
            ) { event in
                // Idempotent: a redelivered event, or one whose profile Identity's repair removed first, finds nothing.
                try await store.delete(accountId: event.accountId)
            }
            self.events = (client, consumer, OutboxRelay(store: storage, notifications: client, logger: logger))
        } else {
            self.events = nil
        }
        self.logger = logger
        store.register(on: wireServer)
    }

    /// Where the wire server listens, once it does (port 0 picks a free one).
    public func localAddress() async throws -> SocketAddress {
        try await wireServer.localAddress()
    }

    /// The parts of the service, to run as one ServiceGroup (``run()`` runs them inside another group).
    ///
    /// With PostgreSQL, the pool starts first, the migrations next (retried with backoff while the database cannot
    /// be reached), and the wire server listens only once they are applied. Shutdown runs in reverse: the wire
    /// server sends goaway and lets its accepted requests finish (their reads included) before the migrations step
    /// and the pool stop, so no accepted request loses its database.
    public func componentGraph() throws(ComponentGraphError) -> ComponentGraph {
        var host = ServiceHost("profile", logger: logger)
        if let client, let postgresStorage {
            host.database(client) { try await postgresStorage.migrate(logger: self.logger) }
        }
        if let events {
            host.add("notifications-client", events.client, servesWire: false)
            host.addJob("deletion-consumer", needs: ["notifications-client"], events.consumer)
            host.addJob("outbox-relay", needs: ["notifications-client"], events.relay)
        }
        return try host.graph(wire: wireServer)
    }

    public func run() async throws {
        try await self.componentGraph().run(logger: self.logger)
    }
}
