import NIOCore

/// One event received on a subscription, before its payload is decoded.
public struct WireRawDelivery: Sendable {
    public var subscriptionID: UInt64
    /// What the acknowledgement carries.
    public var deliveryID: UInt64
    public var topic: String
    public var payload: ByteBuffer

    public init(subscriptionID: UInt64, deliveryID: UInt64, topic: String, payload: ByteBuffer) {
        self.subscriptionID = subscriptionID
        self.deliveryID = deliveryID
        self.topic = topic
        self.payload = payload
    }
}
