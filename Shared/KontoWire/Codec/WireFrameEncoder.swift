import NIOCore

/// Writes frames as bytes.
public struct WireFrameEncoder: MessageToByteEncoder, Sendable {
    public typealias OutboundIn = WireFrame

    public init() {}

    public func encode(data: WireFrame, out: inout ByteBuffer) throws {
        WireFrameCodec.encode(data, into: &out)
    }
}
