import NIOCore

/// Either direction: an unsolicited message on a topic; the receiver answers with an ack
/// carrying the same correlation id.
public struct WireEvent: Sendable, Hashable {
    public var topic: String
    public var payload: ByteBuffer

    public init(topic: String, payload: ByteBuffer) {
        self.topic = topic
        self.payload = payload
    }
}
