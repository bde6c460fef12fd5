import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

extension GatewayServer {
    /// The HTTP application around the router, as hummingbird's template builds one (`buildApplication`): HTTP/1.1
    /// with the gateway's limits on the request head (its timeout, header sizes) and idle connections.
    static func buildApplication(
        router: Router<GatewayRequestContext>, configuration: GatewayConfiguration, host: String? = nil, port: Int? = nil, eventLoopGroup: any EventLoopGroup,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void, logger: Logger
    ) -> Application<RouterResponder<GatewayRequestContext>> {
        let headTimeout = TimeAmount(configuration.requestHeadTimeout)
        var httpConfiguration = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestHeadTimeoutHandler(timeout: headTimeout)],
            idleTimeout: TimeAmount(configuration.idleTimeout)
        )
        // Headers: 16 KiB per field and 32 KiB in all, well above what browsers send, far below the defaults.
        httpConfiguration.httpDecoder = .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100)
        return Application(
            router: router,
            server: .http1(configuration: httpConfiguration),
            configuration: ApplicationConfiguration(address: .hostname(host ?? configuration.host, port: port ?? configuration.port), serverName: "konto-gateway"),
            onServerRunning: onServerRunning,
            eventLoopGroupProvider: .shared(eventLoopGroup),
            logger: logger
        )
    }
}
