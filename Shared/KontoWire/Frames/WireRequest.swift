import NIOCore

/// Client to server: call `method` with an opaque payload.
public struct WireRequest: Sendable, Hashable {
    public var method: String
    /// How long the caller will wait, in milliseconds from when the server reads the frame.
    /// Relative rather than absolute so that clock skew between hosts does not matter.
    public var timeoutMilliseconds: UInt32?
    public var requestID: String?
    /// W3C trace context `traceparent` value.
    public var traceParent: String?
    /// Set on a request that opens a subscription: how many events the server may have unacknowledged on it at
    /// once (docs/PROTOCOL.md, "Subscriptions").
    public var credit: UInt32?
    /// Opaque to the wire layer; the typed API puts JSON here.
    public var payload: ByteBuffer

    public init(
        method: String,
        timeoutMilliseconds: UInt32? = nil,
        requestID: String? = nil,
        traceParent: String? = nil,
        credit: UInt32? = nil,
        payload: ByteBuffer
    ) {
        self.method = method
        self.timeoutMilliseconds = timeoutMilliseconds
        self.requestID = requestID
        self.traceParent = traceParent
        self.credit = credit
        self.payload = payload
    }
}

/// Tags of the request header list (see docs/PROTOCOL.md).
public enum WireRequestHeaderTag: UInt8, Sendable {
    case method = 1
    case timeoutMilliseconds = 2
    case requestID = 3
    case traceParent = 4
    case credit = 5
}
