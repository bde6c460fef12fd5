import Hummingbird
import NIOCore

/// The per-request context: Hummingbird's core storage plus the peer's address (the client address when no trusted
/// proxy header is configured).
public struct GatewayRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}
