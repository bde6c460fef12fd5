import CoreMetrics
import Hummingbird
import Logging
import Prometheus
import ServiceLifecycle

/// Notifications' metrics in its own Prometheus registry (not the process-wide one, so several services in one
/// process, as in the dev stack and tests, keep theirs apart), recorded through swift-metrics: the courier's
/// `konto_mail_sent_total`, `konto_mail_retried_total` and `konto_mail_dead_lettered_total`.
public final class NotificationMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    public init() {}

    /// What the service's parts record into.
    var factory: PrometheusMetricsFactory { PrometheusMetricsFactory(registry: registry) }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}

/// Serves ``NotificationMetrics`` at `GET /metrics` (Prometheus text) on a listener of its own
/// (`KONTO_NOTIFICATIONS_METRICS_PORT`): Notifications speaks only the wire protocol otherwise, and a scraper should
/// not need the wire secret. Nothing else is served; every other path is 404.
struct MetricsEndpoint: Service {
    let metrics: NotificationMetrics
    let host: String
    let port: Int
    let logger: Logger
    /// Told the bound address once listening (port 0 picks a free one).
    let bound: @Sendable (Int) -> Void

    func run() async throws {
        let router = Router()
        router.get("/metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "konto-notifications"),
            onServerRunning: { channel in bound(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        try await app.runService()
    }
}
