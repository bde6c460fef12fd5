import NIOCore

/// Splits the byte stream into frames.
///
/// The length is checked against ``maximumLength`` as soon as the 4-byte prefix is readable, so
/// an oversized frame is refused before any of its body is buffered.
public struct WireFrameDecoder: ByteToMessageDecoder, Sendable {
    public typealias InboundOut = WireFrame

    public let maximumLength: Int

    public init(maximumLength: Int = WireFrame.defaultMaximumLength) {
        self.maximumLength = maximumLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try WireFrameCodec.decode(&buffer, maximumLength: self.maximumLength) else {
            return .needMoreData
        }
        context.fireChannelRead(Self.wrapInboundOut(frame))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try self.decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 {
            // A truncated frame at EOF is an error, not something to silently drop.
            let pending = buffer.readableBytes
            buffer.moveReaderIndex(forwardBy: pending)
            throw WireError.malformedFrame("connection ended inside a frame (\(pending) bytes pending)")
        }
        return .needMoreData
    }
}
