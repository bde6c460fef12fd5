import NIOCore

/// Server to client: one delivery on a subscription (docs/PROTOCOL.md, "Subscriptions").
///
/// The frame's correlation id is the delivery id, numbered by the server per connection; the client answers it
/// with an ack (or a negative ack) carrying the same id.
public struct WireEvent: Sendable, Hashable {
    /// The correlation id of the request that opened the subscription.
    public var subscriptionID: UInt64
    public var topic: String
    public var payload: ByteBuffer

    public init(subscriptionID: UInt64, topic: String, payload: ByteBuffer) {
        self.subscriptionID = subscriptionID
        self.topic = topic
        self.payload = payload
    }
}
