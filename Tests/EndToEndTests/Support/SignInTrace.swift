import Foundation
import KontoTestSupport

/// What one password sign-in's trace must look like, checked on the spans an ``OTLPReceiver`` decoded: the gateway's
/// request continuing the client's `traceparent`, the gateway's wire call to Identity and Identity's server span under
/// it, Identity's call to Profile and Profile's server span under that, storage spans in both, and every span joined
/// to the tree. Shared by the single-host tracing test and the multi-host rehearsal.
struct SignInTrace {
    let spans: [OTLPReceiver.Span]
    /// The client's own span: the parent the gateway's request names.
    let clientSpanId: String

    /// A new client span context: `traceparent` for the request, and the ids to look for.
    static func clientContext() -> (traceParent: String, traceId: String, spanId: String) {
        let traceId = Self.hex(16)
        let spanId = Self.hex(8)
        return ("00-\(traceId)-\(spanId)-01", traceId, spanId)
    }

    static func hex(_ bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 1...255)) }.joined()
    }

    var gatewayRequest: OTLPReceiver.Span? {
        spans.first { $0.service == "konto-gateway" && $0.kind == OTLPReceiver.Span.serverKind && $0.parentSpanId == clientSpanId }
    }

    /// The server span of wire method `method` in `service`, with its parent: the client span that called it.
    func wireCall(_ method: String, in service: String) -> (server: OTLPReceiver.Span, caller: OTLPReceiver.Span)? {
        for server in spans where server.service == service && server.kind == OTLPReceiver.Span.serverKind && server.name == method {
            if let caller = spans.first(where: { $0.spanId == server.parentSpanId && $0.kind == OTLPReceiver.Span.clientKind && $0.name == method }) {
                return (server, caller)
            }
        }
        return nil
    }

    /// The storage spans of `service`.
    func statements(in service: String) -> [OTLPReceiver.Span] {
        spans.filter { $0.service == service && $0.attributes["db.system.name"] == "postgresql" }
    }

    /// True once everything a sign-in makes has arrived (services export in batches).
    var isComplete: Bool { problems.isEmpty }

    /// What is missing or wrong; empty for a whole, well-formed trace.
    var problems: [String] {
        var problems: [String] = []
        guard let request = gatewayRequest else {
            return ["no gateway server span continuing the client's span \(clientSpanId)"]
        }
        if request.name != "/v1/sessions" { problems.append("the gateway's span is named \(request.name), not /v1/sessions") }
        guard let login = wireCall("identity.login", in: "konto-identity") else {
            return problems + ["no identity.login server span under a client span of the same call"]
        }
        if login.caller.service != "konto-gateway" || login.caller.parentSpanId != request.spanId {
            problems.append("identity.login was not called from the gateway's request span")
        }
        guard let load = wireCall("profile.load", in: "konto-profile") else {
            return problems + ["no profile.load server span under a client span of the same call"]
        }
        if load.caller.service != "konto-identity" || !isDescendant(load.caller, of: login.server) {
            problems.append("profile.load was not called from within Identity's identity.login")
        }
        if !statements(in: "konto-identity").contains(where: { isDescendant($0, of: login.server) }) {
            problems.append("no Identity storage span under identity.login")
        }
        if !statements(in: "konto-profile").contains(where: { isDescendant($0, of: load.server) }) {
            problems.append("no Profile storage span under profile.load")
        }
        let ids = Set(spans.map(\.spanId))
        for span in spans where span.spanId != request.spanId && !ids.contains(span.parentSpanId) {
            problems.append("span \(span.name) (\(span.service)) hangs off \(span.parentSpanId), which is not in the trace")
        }
        return problems
    }

    func isDescendant(_ span: OTLPReceiver.Span, of ancestor: OTLPReceiver.Span) -> Bool {
        var current = span
        for _ in 0..<spans.count {
            if current.parentSpanId == ancestor.spanId { return true }
            guard let parent = spans.first(where: { $0.spanId == current.parentSpanId }) else { return false }
            current = parent
        }
        return false
    }
}
