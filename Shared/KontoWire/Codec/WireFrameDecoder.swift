import NIOCore

/// Splits the byte stream into frames.
///
/// The length is checked against ``maximumLength`` as soon as the 4-byte prefix is readable, so
/// an oversized frame is refused before any of its body is buffered.
public struct WireFrameDecoder: ByteToMessageDecoder, Sendable {
    public typealias InboundOut = WireFrame

    public let maximumLength: Int
    /// The cap on the first frame, when set: a server's whole handshake is the client's first frame (its hello,
    /// a few hundred bytes), and a peer not yet authenticated must not make it buffer up to ``maximumLength``.
    public let firstFrameMaximumLength: Int?
    private var decodedFirstFrame = false

    public init(maximumLength: Int = WireFrame.defaultMaximumLength, firstFrameMaximumLength: Int? = nil) {
        self.maximumLength = maximumLength
        self.firstFrameMaximumLength = firstFrameMaximumLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        var limit = self.maximumLength
        if !self.decodedFirstFrame, let first = self.firstFrameMaximumLength {
            limit = min(limit, first)
        }
        guard let frame = try WireFrameCodec.decode(&buffer, maximumLength: limit) else {
            return .needMoreData
        }
        // Set before the frame goes on: the server's state machine has completed (or refused) the handshake by
        // the time the next frame is decoded.
        self.decodedFirstFrame = true
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
