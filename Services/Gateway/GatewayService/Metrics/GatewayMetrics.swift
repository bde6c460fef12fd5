import CoreMetrics
import Foundation
import NIOCore
import Prometheus

/// The gateway's metrics in its own Prometheus registry (not the process-wide one, so several gateways in one
/// process, as in tests, keep theirs apart), recorded through swift-metrics and served at `/metrics`:
/// requests by route, method and status with their durations, and every service call's latency and error code.
final class GatewayMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// The routes of the document, for answers given before the router matched one: anything else is counted as
    /// `unmatched`, so label values stay bounded.
    private let routes: Set<String>

    private let cacheHits: [String: CoreMetrics.Counter]
    private let cacheMisses: [String: CoreMetrics.Counter]
    private let cacheLiveGauge: CoreMetrics.Gauge

    init(routes: Set<String>) {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        let buckets: [Duration] = [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10)]
        factory.defaultDurationHistogramBuckets = buckets
        self.registry = registry
        self.factory = factory
        self.routes = routes
        func counters(_ outcome: String) -> [String: CoreMetrics.Counter] {
            Dictionary(uniqueKeysWithValues: ["session", "account"].map { cache in
                (cache, CoreMetrics.Counter(label: "konto_gateway_cache_lookups_total", dimensions: [("cache", cache), ("outcome", outcome)], factory: factory))
            })
        }
        cacheHits = counters("hit")
        cacheMisses = counters("miss")
        cacheLiveGauge = CoreMetrics.Gauge(label: "konto_gateway_cache_live", factory: factory)
        cacheLiveGauge.record(0)
    }

    /// The label of a request's route: the route the router matched (`endpoint`, a template such as
    /// `/v1/account/factors/{factorId}` or the console's `/account/login`, registered by the gateway so bounded), else
    /// the API's template the path falls under (an answer given before routing: the cache, a limit), else `unmatched`.
    func route(path: String, endpoint: String?) -> String {
        // Hummingbird names a request no route matched "NotFound".
        if let endpoint, endpoint != "NotFound" { return endpoint }
        if routes.contains(path) { return path }
        // A path with parameters is counted under its template, so label values stay bounded.
        return OpenAPIDocument.template(matching: path).flatMap { routes.contains($0) ? $0 : nil } ?? "unmatched"
    }

    func request(path: String, endpoint: String?, method: String, status: Int, duration: Duration) {
        let route = route(path: path, endpoint: endpoint)
        Counter(label: "konto_gateway_requests_total", dimensions: [("route", route), ("method", method), ("status", String(status))], factory: factory).increment()
        Timer(label: "konto_gateway_request_duration_seconds", dimensions: [("route", route), ("method", method)], factory: factory).recordNanoseconds(TimeAmount(duration).nanoseconds)
    }

    func upstream(service: String, method: String, duration: Duration, errorCode: String?) {
        Timer(label: "konto_gateway_upstream_duration_seconds", dimensions: [("service", service), ("method", method)], factory: factory).recordNanoseconds(TimeAmount(duration).nanoseconds)
        if let errorCode {
            Counter(label: "konto_gateway_upstream_errors_total", dimensions: [("service", service), ("method", method), ("code", errorCode)], factory: factory).increment()
        }
    }

    /// A cache lookup that found its answer, or missed while the cache was live.
    func cache(_ cache: String, hit: Bool) {
        (hit ? cacheHits : cacheMisses)[cache]?.increment()
    }

    /// Whether the account cache is serving (1) or off because it cannot follow the account events (0).
    func cacheLive(_ live: Bool) {
        cacheLiveGauge.record(live ? 1 : 0)
    }

    /// A change's wait for every gateway's cache (`complete`, `timeout`: answered with some cache behind, `failed`:
    /// Notifications unreachable), and how long it took.
    func cacheBarrier(outcome: String, duration: Duration) {
        Counter(label: "konto_gateway_cache_barriers_total", dimensions: [("outcome", outcome)], factory: factory).increment()
        Timer(label: "konto_gateway_cache_barrier_duration_seconds", factory: factory).recordNanoseconds(TimeAmount(duration).nanoseconds)
    }

    /// The Prometheus text exposition of every metric.
    func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}
