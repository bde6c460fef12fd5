import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Serves a service's metrics at `GET /metrics` (Prometheus text) on a listener of its own: Identity and
/// Notifications speak only the wire protocol otherwise, and a scraper should not need a wire secret. Nothing else is
/// served; every other path is 404. (The gateway serves its own `/metrics` beside its API.)
public struct MetricsEndpoint: Service {
    let exposition: @Sendable () -> [UInt8]
    let serverName: String
    let host: String
    let port: Int
    let logger: Logger
    /// Told the bound port once listening (port 0 picks a free one).
    let bound: @Sendable (Int) -> Void

    /// - Parameters:
    ///   - exposition: the Prometheus text of every metric, at the moment of a scrape.
    ///   - serverName: the `Server` header's value (the executable's name).
    public init(
        exposition: @escaping @Sendable () -> [UInt8], serverName: String, host: String, port: Int, logger: Logger,
        bound: @escaping @Sendable (Int) -> Void
    ) {
        self.exposition = exposition
        self.serverName = serverName
        self.host = host
        self.port = port
        self.logger = logger
        self.bound = bound
    }

    public func run() async throws {
        let router = Router()
        let exposition = exposition
        router.get("/metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: exposition())))
        }
        let bound = bound
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: serverName),
            onServerRunning: { channel in bound(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        try await app.runService()
    }
}
