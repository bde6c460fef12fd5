import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import KontoContracts
import KontoRuntime
import KontoWire
import Logging
import NIOCore
import NIOPosix
import OpenAPIHummingbird
import OpenAPIRuntime
import ServiceLifecycle
import Synchronization

/// The gateway: the HTTP API (Hummingbird, routes generated from openapi.yaml) in front of pooled wire clients to
/// Identity, Profile and Notifications, as a component graph (the clients start before the HTTP server listens
/// and stop after it).
public final class GatewayServer: Service {
    /// The name the gateway calls the services by, and the one its own wire key (`KONTO_GATEWAY_WIRE_KEY`) is for.
    public static let serviceName = WireAllowList.gateway
    public let configuration: GatewayConfiguration
    private let identity: WireClient
    private let profile: WireClient
    private let notifications: WireClient
    private let events: WireClient
    /// Follows the account events while the cache is on.
    private let cacheInvalidator: AccountCacheInvalidator?
    /// The HTTP application (its router with every middleware), for router-level tests (HummingbirdTesting).
    package let application: Application<RouterResponder<GatewayRequestContext>>
    /// The admin listener's application, when it is on (``GatewayConfiguration/adminPort``).
    package let adminApplication: Application<RouterResponder<GatewayRequestContext>>?
    private let boundAddress: EventLoopPromise<SocketAddress>
    private let adminBoundAddress: EventLoopPromise<SocketAddress>
    /// Whether the HTTP server has bound its address: a failure before that is a ``ListenError``.
    private let listening: ListeningFlag
    private let logger: Logger

    /// The gateway's API alone. The executable and the dev stack serve the web console too:
    /// `GatewayServer.withConsole(configuration:logger:)` in GatewayConsole.
    public convenience init(
        configuration: GatewayConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) throws {
        try self.init(configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger, pages: nil)
    }

    /// The API and the `pages` (the console) beside it; `adminPages` (the admin console) beside the admin API.
    package init(
        configuration: GatewayConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger,
        pages makePages: GatewayPagesFactory?,
        adminPages makeAdminPages: GatewayPagesFactory? = nil
    ) throws {
        self.configuration = configuration
        self.logger = logger
        let timeout = TimeAmount(configuration.upstreamTimeout)
        func client(
            _ upstream: GatewayConfiguration.Upstream, service: String, server: String? = nil, connections: Int = configuration.connectionsPerService,
            heartbeat: TimeAmount? = nil
        ) throws -> WireClient {
            var wire = WireClient.Configuration(host: upstream.host, port: upstream.port, serviceName: Self.serviceName, serverName: server ?? service, secret: configuration.secret)
            try wire.apply(configuration.wireTLS)
            wire.connectionCount = connections
            wire.requestTimeout = timeout
            if let heartbeat { wire.heartbeatInterval = heartbeat }
            var logger = logger
            logger[metadataKey: "konto.upstream"] = "\(service)"
            return WireClient(configuration: wire, eventLoopGroup: eventLoopGroup, logger: logger)
        }
        let identity = try client(configuration.identity, service: IdentityContract.serviceName)
        let profile = try client(configuration.profile, service: ProfileContract.serviceName)
        let notifications = try client(configuration.notifications, service: NotificationsContract.serviceName)
        self.identity = identity
        self.profile = profile
        self.notifications = notifications
        // The cache's tail runs here: a dead Notifications must be noticed (its connection closed, the cache off) well
        // within the reader's lease there (NotificationOptions.tailReaderLease, 5 s), so idle connections ping every second.
        let events = try client(
            configuration.notifications, service: "notifications-events", server: NotificationsContract.serviceName,
            connections: configuration.eventStreamConnections, heartbeat: .seconds(1)
        )
        self.events = events
        let metrics = GatewayMetrics(routes: OpenAPIDocument.paths)
        let upstreams = GatewayUpstreams(identity: identity, profile: profile, notifications: notifications, events: events, timeout: timeout, metrics: metrics)
        let cache = AccountCache(configuration: .init(timeToLive: configuration.cacheTimeToLive, capacity: configuration.cacheCapacity))
        self.cacheInvalidator = cache.isEnabled ? AccountCacheInvalidator(client: events, cache: cache, metrics: metrics, logger: logger) : nil
        let api = try GatewayAPI(
            upstreams: upstreams, accounts: configuration.accounts, eventStreamHeartbeat: configuration.eventStreamHeartbeat,
            requireVerifiedEmail: configuration.requireVerifiedEmail, metrics: metrics, cache: cache,
            barrierTimeout: configuration.cacheBarrierTimeout
        )

        let rateLimits = GatewayRateLimits(
            generalPerMinute: configuration.rateLimitPerMinute,
            credentialsPerMinute: configuration.credentialsRateLimitPerMinute
        )
        let router = try Self.buildRouter(api: api, rateLimits: rateLimits, cache: cache, metrics: metrics, pages: makePages, configuration: configuration, logger: logger)

        let boundAddress = eventLoopGroup.any().makePromise(of: SocketAddress.self)
        self.boundAddress = boundAddress
        let adminBoundAddress = eventLoopGroup.any().makePromise(of: SocketAddress.self)
        self.adminBoundAddress = adminBoundAddress
        if let adminPort = configuration.adminPort {
            let adminLimits = GatewayRateLimits(generalPerMinute: configuration.adminRateLimitPerMinute, credentialsPerMinute: 0)
            let adminRouter = try Self.buildAdminRouter(
                api: api, rateLimits: adminLimits, metrics: metrics, pages: makeAdminPages, configuration: configuration, logger: logger
            )
            self.adminApplication = Self.buildApplication(
                router: adminRouter, configuration: configuration, host: configuration.adminHost, port: adminPort, eventLoopGroup: eventLoopGroup,
                onServerRunning: { channel in
                    if let address = channel.localAddress { adminBoundAddress.succeed(address) }
                },
                logger: logger
            )
        } else {
            self.adminApplication = nil
        }
        let listening = ListeningFlag()
        self.listening = listening
        self.application = Self.buildApplication(
            router: router, configuration: configuration, eventLoopGroup: eventLoopGroup,
            onServerRunning: { channel in
                listening.value.withLock { $0 = true }
                if let address = channel.localAddress {
                    boundAddress.succeed(address)
                }
            },
            logger: logger
        )
    }

    deinit {
        boundAddress.fail(ChannelError.ioOnClosedChannel)
        adminBoundAddress.fail(ChannelError.ioOnClosedChannel)
    }

    /// Where the admin listener listens, once it does; an error when it is off or will not listen.
    public func localAdminAddress() async throws -> SocketAddress {
        try await adminBoundAddress.futureResult.get()
    }

    /// Where the HTTP server listens, once it does (port 0 picks a free one).
    public func localAddress() async throws -> SocketAddress {
        try await boundAddress.futureResult.get()
    }

    public func componentGraph() throws(ComponentGraphError) -> ComponentGraph {
        var components: [Component] = [
            .service("identity-client", identity),
            .service("profile-client", profile),
            .service("notifications-client", notifications),
            .service("events-client", events),
            .service("http", dependsOn: ["identity-client", "profile-client", "notifications-client", "events-client"], application),
        ]
        if let cacheInvalidator {
            components.append(.service("cache-invalidator", dependsOn: ["events-client"], cacheInvalidator))
        }
        if let adminApplication {
            components.append(.service("admin-http", dependsOn: ["identity-client", "profile-client"], adminApplication))
        }
        return try ComponentGraph(components)
    }

    /// Answers every wait for ``localAddress()`` that is still open with an error: the server will not listen (it
    /// stopped, or was never started because something it needs failed first). A no-op once it has listened.
    public func endAddressWait() {
        boundAddress.fail(ChannelError.ioOnClosedChannel)
        adminBoundAddress.fail(ChannelError.ioOnClosedChannel)
    }

    public func run() async throws {
        // Whoever waits for the address learns that it never comes.
        defer { endAddressWait() }
        do {
            try await componentGraph().run(logger: logger)
        } catch let error as IOError where !listening.value.withLock({ $0 }) {
            // Only the HTTP server binds anything here; the wire clients retry what they cannot reach.
            throw ListenError(server: "gateway", host: configuration.host, port: configuration.port, error: error)
        } catch let error as SocketAddressError where !listening.value.withLock({ $0 }) {
            throw ListenError(server: "gateway", host: configuration.host, port: configuration.port, error: error)
        }
    }
}

/// Set once the HTTP server has bound its address (shared with the server's start callback).
private final class ListeningFlag: Sendable {
    let value = Mutex(false)
}
