import KontoRuntime
import OTel
import Logging
import Testing

@Suite("Service tracing: when traces are exported and what is refused")
struct ServiceTracingTests {
    static let logger = Logger(label: "konto.tests.tracing")

    @Test("no endpoint: tracing off; an endpoint: traces over OTLP/HTTP as konto-<service>, with metrics and logs not exported")
    func configuration() throws {
        #expect(try ServiceTracing.configuration(service: "identity", environment: [:], logger: Self.logger) == nil)
        #expect(try ServiceTracing.configuration(service: "identity", environment: ["OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"], logger: Self.logger) == nil)
        // Empty is unset, as compose passes `${OTEL_EXPORTER_OTLP_ENDPOINT:-}`.
        #expect(try ServiceTracing.configuration(service: "identity", environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": ""], logger: Self.logger) == nil)
        for variable in [ServiceTracing.endpointVariable, ServiceTracing.tracesEndpointVariable] {
            let configuration = try #require(try ServiceTracing.configuration(service: "identity", environment: [variable: "http://collector:4318"], logger: Self.logger))
            #expect(configuration.serviceName == "konto-identity")
            #expect(configuration.traces.enabled)
            #expect(!configuration.metrics.enabled && !configuration.logs.enabled)
        }
    }

    @Test("an endpoint that is not an http(s) URL, or a protocol other than http/protobuf, is refused by name", arguments: [
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"], "OTEL_EXPORTER_OTLP_ENDPOINT"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://"], "OTEL_EXPORTER_OTLP_ENDPOINT"),
        (["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "udp://collector:4318"], "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"], "OTEL_EXPORTER_OTLP_PROTOCOL"),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"], "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
    ])
    func refused(environment: [String: String], variable: String) {
        let error = #expect(throws: ServiceEnvironmentError.self) {
            try ServiceTracing.configuration(service: "profile", environment: environment, logger: Self.logger)
        }
        #expect(error?.variable == variable)
    }
}
