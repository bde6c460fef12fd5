import CoreMetrics
import Prometheus

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
