/// Server to client: no new requests on this connection. Requests with a correlation id up to
/// and including `lastCorrelationID` will still be answered; later ones were not processed and
/// are safe to retry elsewhere.
public struct WireGoAway: Sendable, Hashable {
    public var lastCorrelationID: UInt64
    public var reason: String

    public init(lastCorrelationID: UInt64, reason: String) {
        self.lastCorrelationID = lastCorrelationID
        self.reason = reason
    }
}
