import GatewayService
import Logging
import NIOCore
import NIOPosix

extension GatewayServer {
    /// The gateway with the web console beside its API, at the configured path (none when that is off), and the admin
    /// console beside the admin API on the admin listener (when that is on).
    public static func withConsole(
        configuration: GatewayConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) throws -> GatewayServer {
        try GatewayServer(configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger, pages: AccountConsole.pages, adminPages: AdminConsole.pages)
    }
}
