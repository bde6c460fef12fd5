import Foundation

/// An OTLP/HTTP receiver for tests: Tests/Tracing/otlp_receiver.py as a process of its own, which decodes every
/// export with PyPI's `opentelemetry-proto` (OpenTelemetry's generated code for the OTLP messages, what a Collector
/// reads) and reports each span. scripts/test.sh installs it and names its Python in `KONTO_OTLP_PYTHON`.
public final class OTLPReceiver: Sendable {
    /// One span as the receiver decoded it.
    public struct Span: Decodable, Sendable, Equatable {
        /// Hex, as in `traceparent`.
        public var traceId: String
        public var spanId: String
        /// Empty for a trace's root.
        public var parentSpanId: String
        public var name: String
        /// OTLP's SpanKind: 2 server, 3 client.
        public var kind: Int
        /// The resource's `service.name` and `host.name`.
        public var service: String
        public var host: String
        public var attributes: [String: String]
        /// OTLP's status code: 0 unset, 1 ok, 2 error.
        public var status: Int

        public static let serverKind = 2
        public static let clientKind = 3
    }

    /// Where services send their traces: the value for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    public let endpoint: String
    private let process: ServiceProcess

    private init(endpoint: String, process: ServiceProcess) {
        self.endpoint = endpoint
        self.process = process
    }

    /// Starts the receiver on `host` (loopback by default; a ``VirtualNetwork``'s bridge address for services on its
    /// hosts) and returns once it listens.
    public static func start(host: String = "127.0.0.1") async throws -> OTLPReceiver {
        let (process, ready) = try await ServiceProcess.startPythonJudge(
            "Tracing/otlp_receiver.py", arguments: [host, "0"], pythonVariable: "KONTO_OTLP_PYTHON", tool: "opentelemetry-proto", readyPrefix: "ready "
        )
        return OTLPReceiver(endpoint: "http://\(host):\(ready.dropFirst(6))", process: process)
    }

    private var lines: [Substring] { process.output.split(separator: "\n") }

    /// Every span received so far, in the order they came.
    public var spans: [Span] {
        lines.filter { $0.hasPrefix("{") }.compactMap { try? JSONDecoder().decode(Span.self, from: Data($0.utf8)) }
    }

    /// What the receiver refused (an export it could not decode, or not protobuf), and any line of its output that is
    /// no span (a span lost on the way to the test); empty when all was well.
    public var refusals: [String] {
        lines.compactMap { line in
            if line.hasPrefix("refused") { return String(line) }
            if line.hasPrefix("{"), (try? JSONDecoder().decode(Span.self, from: Data(line.utf8))) == nil {
                return "an undecodable span line: \(line.prefix(200))"
            }
            return nil
        }
    }

    /// The spans of trace `traceId` once `done` holds for them; those there are after `bound` otherwise. Services
    /// export in batches, so a trace's spans arrive over a while.
    public func spans(ofTrace traceId: String, within bound: Duration = .seconds(20), until done: ([Span]) -> Bool) async -> [Span] {
        let deadline = ContinuousClock.now + bound
        while true {
            let current = spans.filter { $0.traceId == traceId }
            if done(current) || ContinuousClock.now >= deadline { return current }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Stops the receiver.
    public func stop() async {
        await process.stop(grace: .seconds(5))
    }
}
