import Instrumentation
import ServiceContextModule
import Tracing

/// The trace context a wire request carries: the W3C `traceparent` header of its frame (docs/PROTOCOL.md, field 4).
/// The installed instrument (swift-distributed-tracing's `InstrumentationSystem`) writes and reads it, as it does
/// HTTP headers, so the wire carries whatever context the tracer in use propagates; with none installed (tracing
/// off) nothing is written and a request carries only a `traceparent` its caller passed on.
struct WireTraceHeaders {
    static let traceParent = "traceparent"

    var traceParent: String?

    /// The `traceparent` for a request made in `context` (the client span's), if the instrument writes one.
    static func inject(_ context: ServiceContext) -> String? {
        var headers = WireTraceHeaders()
        InstrumentationSystem.instrument.inject(context, into: &headers, using: Injector())
        return headers.traceParent
    }

    /// The context a request's `traceparent` names, for the server span to continue; top level without one or when
    /// the instrument cannot read it (an invalid value starts a new trace rather than joining a made-up one).
    static func extract(_ traceParent: String?) -> ServiceContext {
        var context = ServiceContext.topLevel
        guard let traceParent else { return context }
        InstrumentationSystem.instrument.extract(WireTraceHeaders(traceParent: traceParent), into: &context, using: Extractor())
        return context
    }

    struct Injector: Instrumentation.Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout WireTraceHeaders) {
            // The frame has a field for `traceparent` alone; `tracestate` and baggage are not carried.
            if key == WireTraceHeaders.traceParent {
                carrier.traceParent = value
            }
        }
    }

    struct Extractor: Instrumentation.Extractor {
        func extract(key: String, from carrier: WireTraceHeaders) -> String? {
            key == WireTraceHeaders.traceParent ? carrier.traceParent : nil
        }
    }
}
