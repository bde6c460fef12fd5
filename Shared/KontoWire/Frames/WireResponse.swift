import NIOCore

/// Server to client: the successful answer to the request with the same correlation id.
public struct WireResponse: Sendable, Hashable {
    public var payload: ByteBuffer

    public init(payload: ByteBuffer) {
        self.payload = payload
    }
}
