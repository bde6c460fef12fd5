import Foundation
import Logging

/// What the gateway knows about the request being handled, for the generated handlers (whose inputs carry only
/// the document's parameters): its id and trace context for the services, the caller's address for throttling,
/// the bearer token, and a logger whose every line names the request.
struct RequestScope: Sendable {
    var requestID: String
    var traceParent: String?
    var clientAddress: String?
    /// The request came through a trusted proxy (its forwarding headers are believed).
    var viaTrustedProxy = false
    /// The browser's device marker (the web console's cookie), passed to Identity with a login or reset request.
    var clientDevice: String?
    /// The client's `User-Agent`, at most ``maximumClientNameBytes`` (Identity keeps at most 256 characters of it).
    var clientName: String?
    var bearerToken: String?
    /// The request's `If-Match` as sent, beside the generated input's URI-decoded value
    /// (``GatewayAPI/expectedVersion(ifMatch:)`` reads both).
    var ifMatch: String?
    /// The gateway's logger; ``logger`` adds the request id when a line is written.
    var baseLogger: Logger

    init(requestID: String, traceParent: String? = nil, clientAddress: String? = nil, bearerToken: String? = nil, logger: Logger) {
        self.requestID = requestID
        self.traceParent = traceParent
        self.clientAddress = clientAddress
        self.bearerToken = bearerToken
        self.baseLogger = logger
    }

    /// A logger whose every line names the request. Built when needed, not per request: setting metadata on a
    /// stream log handler renders all of it each time (measured on the wire server's answer path).
    var logger: Logger {
        var logger = baseLogger
        logger[metadataKey: "konto.request_id"] = "\(requestID)"
        return logger
    }

    @TaskLocal static var current: RequestScope?

    /// Past this, a `User-Agent` is cut before it is passed on (the header itself is bounded by the HTTP server).
    static let maximumClientNameBytes = 1_024

    /// A `User-Agent` as passed to Identity: cut at a character boundary within ``maximumClientNameBytes``.
    static func clientName(fromUserAgent value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        guard value.utf8.count > maximumClientNameBytes else { return value }
        var kept = ""
        var bytes = 0
        for character in value {
            bytes += character.utf8.count
            guard bytes <= maximumClientNameBytes else { break }
            kept.append(character)
        }
        return kept
    }

    /// The current scope; a handler always runs inside one (``RequestScopeMiddleware``), this default only serves
    /// calls made outside a request (tests of a handler alone).
    static var scope: RequestScope {
        current ?? RequestScope(requestID: UUID().uuidString.lowercased(), logger: Logger(label: "konto.gateway"))
    }

    /// Runs `operation` within the request being served (its id, client address and logger stay) as the caller who
    /// presents `bearerToken` (a session's token, an operator key) from the browser marked `device`: how the consoles
    /// call the very handlers the HTTP API serves.
    static func asBearer<T: Sendable>(_ bearerToken: String?, device: String? = nil, _ operation: () async throws -> T) async throws -> T {
        var scope = scope
        scope.bearerToken = bearerToken
        scope.clientDevice = device
        return try await $current.withValue(scope) { try await operation() }
    }

    /// An `X-Request-ID` the gateway accepts: 1 to 128 of `A-Z a-z 0-9 - _ . : / + =`; anything else is replaced
    /// by a generated id (it goes into logs and wire headers, so it is never passed on unchecked).
    static func acceptedRequestID(_ value: String?) -> String? {
        guard let value, (1...128).contains(value.utf8.count) else { return nil }
        let allowed = value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "+"), UInt8(ascii: "="):
                true
            default:
                false
            }
        }
        return allowed ? value : nil
    }

    /// A W3C `traceparent` of version 00 (`00-<32 hex>-<16 hex>-<2 hex>`, ids not all zero), else nil: an invalid
    /// one is dropped, as the W3C recommendation says.
    static func acceptedTraceParent(_ value: String?) -> String? {
        guard let value else { return nil }
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "00", parts[1].count == 32, parts[2].count == 16, parts[3].count == 2 else { return nil }
        let isHex = { (part: Substring) in part.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }
        guard parts.dropFirst().allSatisfy(isHex), parts[1].contains(where: { $0 != "0" }), parts[2].contains(where: { $0 != "0" }) else { return nil }
        return value
    }

    /// The token of an `Authorization: Bearer <token>` header (the scheme case-insensitive), if any.
    static func bearerToken(fromAuthorization value: String?) -> String? {
        guard let value else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
