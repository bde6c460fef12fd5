import KontoRuntime
import Logging
import NotificationService
import Testing

@Suite("Notifications configuration from the environment")
struct NotificationServiceConfigurationTests {
    static let base = ["KONTO_WIRE_SECRET": "notifications-configuration-secret-0123456789"]

    static func configuration(_ variables: [String: String]) throws -> NotificationServiceConfiguration {
        try NotificationServiceConfiguration(environment: ServiceEnvironment(base.merging(variables) { _, given in given }), logger: Logger(label: "test"))
    }

    @Test("retention, erasure grace and sweep interval: the defaults and values")
    func retention() throws {
        let defaults = try Self.configuration([:]).options
        #expect(defaults.retention == .seconds(30 * 86_400))
        #expect(defaults.erasureGrace == .seconds(86_400))
        #expect(defaults.sweepInterval == .seconds(10))
        let set = try Self.configuration([
            "KONTO_NOTIFICATIONS_RETENTION_DAYS": "7", "KONTO_NOTIFICATIONS_ERASURE_GRACE_SECONDS": "0", "KONTO_NOTIFICATIONS_SWEEP_MS": "250",
        ]).options
        #expect(set.retention == .seconds(7 * 86_400))
        #expect(set.erasureGrace == .zero)
        #expect(set.sweepInterval == .milliseconds(250))
    }

    @Test("webhook endpoints added through the API: https on public hosts and a 5 s reload unless told otherwise")
    func runtimeWebhooks() throws {
        let defaults = try Self.configuration([:])
        #expect(defaults.allowsLocalWebhooks == false && defaults.webhookReloadInterval == .seconds(5) && defaults.maxStoredWebhooks == 50)
        let set = try Self.configuration([
            "KONTO_NOTIFICATIONS_WEBHOOKS_ALLOW_LOCAL": "true", "KONTO_NOTIFICATIONS_WEBHOOKS_RELOAD_MS": "250", "KONTO_NOTIFICATIONS_WEBHOOKS_MAX": "0",
        ])
        #expect(set.allowsLocalWebhooks && set.webhookReloadInterval == .milliseconds(250) && set.maxStoredWebhooks == 0)
    }

    @Test("/metrics is served only where a port is set, on loopback unless told otherwise")
    func metrics() throws {
        #expect(try Self.configuration([:]).metricsPort == nil)
        let set = try Self.configuration(["KONTO_NOTIFICATIONS_METRICS_PORT": "9402", "KONTO_NOTIFICATIONS_METRICS_HOST": "0.0.0.0"])
        #expect(set.metricsPort == 9402 && set.metricsHost == "0.0.0.0")
        #expect(try Self.configuration(["KONTO_NOTIFICATIONS_METRICS_PORT": "9402"]).metricsHost == "127.0.0.1")
    }

    @Test("a value out of range is refused, naming the variable", arguments: [
        ("KONTO_NOTIFICATIONS_METRICS_PORT", "70000"),
        ("KONTO_NOTIFICATIONS_RETENTION_DAYS", "0"),
        ("KONTO_NOTIFICATIONS_RETENTION_DAYS", "forever"),
        ("KONTO_NOTIFICATIONS_ERASURE_GRACE_SECONDS", "-1"),
        ("KONTO_NOTIFICATIONS_ERASURE_GRACE_SECONDS", "2592001"),
        ("KONTO_NOTIFICATIONS_SWEEP_MS", "5"),
        ("KONTO_NOTIFICATIONS_WEBHOOKS_RELOAD_MS", "50"),
        ("KONTO_NOTIFICATIONS_WEBHOOKS_ALLOW_LOCAL", "perhaps"),
        ("KONTO_NOTIFICATIONS_WEBHOOKS_MAX", "1001"),
    ])
    func refused(variable: String, value: String) {
        #expect {
            try Self.configuration([variable: value])
        } throws: { error in
            "\(error)".contains("\(variable) must be")
        }
    }
}
