import Foundation
import Logging
import OTel
import ServiceLifecycle
import Tracing

/// Traces of a service process: OpenTelemetry spans through swift-distributed-tracing, exported over OTLP/HTTP by
/// swift-otel where `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, off otherwise.
///
/// Only the HTTP exporter is built in (swift-otel's `OTLPHTTP` trait; the gRPC one's packages would add minutes to
/// every build), so a `grpc` protocol is refused by name rather than ignored. The other standard `OTEL_*` variables
/// (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`, headers, timeouts) are
/// swift-otel's to read. docs/CONFIGURATION.md, "Tracing".
public enum ServiceTracing {
    public static let endpointVariable = "OTEL_EXPORTER_OTLP_ENDPOINT"
    public static let tracesEndpointVariable = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    static let protocolVariables = ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]
    static let supportedProtocols = ["http/protobuf"]

    /// Installs the tracer (once per process) and returns the exporter's service for the process's group; nil, and
    /// nothing installed, without an endpoint.
    ///
    /// - Throws: ``ServiceEnvironmentError`` for an endpoint that is not an http(s) URL or a protocol not built in.
    public static func bootstrap(
        service: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        logger: Logger
    ) throws -> (any Service)? {
        guard let configuration = try configuration(service: service, environment: environment, logger: logger) else {
            return nil
        }
        let (tracer, backend) = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(tracer)
        return backend
    }

    /// The exporter's configuration, or nil with tracing off. `package` for the tests, which check the refusals
    /// without installing a tracer.
    package static func configuration(service: String, environment: [String: String], logger: Logger) throws(ServiceEnvironmentError) -> OTel.Configuration? {
        // An empty value is unset, as compose's `${OTEL_EXPORTER_OTLP_ENDPOINT:-}` passes it.
        let endpoints = [tracesEndpointVariable, endpointVariable].compactMap { name in
            environment[name].flatMap { $0.isEmpty ? nil : (name, $0) }
        }
        guard !endpoints.isEmpty else { return nil }
        for (name, value) in endpoints {
            guard let url = URL(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                throw ServiceEnvironmentError(variable: name, problem: "must be an http or https URL of an OTLP/HTTP receiver (e.g. http://collector:4318)")
            }
        }
        for name in protocolVariables {
            if let value = environment[name], !value.isEmpty, !supportedProtocols.contains(value) {
                throw ServiceEnvironmentError(variable: name, problem: "must be http/protobuf: OTLP over gRPC is not built in, and swift-otel writes http/json with base64 ids, which OTLP receivers refuse")
            }
        }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "konto-\(service)"
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning
        configuration.propagators = [.traceContext]
        configuration.traces.enabled = true
        // An export waits at most 2 s and the last flush at shutdown 3 s (swift-otel's defaults are 10 s and 30 s): with
        // the receiver down, a SIGTERM'd service would otherwise outlast compose's and Kubernetes' grace periods
        // (measured: 16 s). `OTEL_EXPORTER_OTLP_TIMEOUT` and `OTEL_BSP_EXPORT_TIMEOUT` still win.
        configuration.traces.otlpExporter.timeout = .seconds(2)
        configuration.traces.batchSpanProcessor.exportTimeout = .seconds(3)
        configuration.traces.exporter = .otlp
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        return configuration
    }
}
