import KontoWire
import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@Suite("Frame decoder")
struct WireFrameDecoderTests {
    /// Builds raw frame bytes around a body given in hex, so malformed bodies can be expressed.
    static func rawFrame(kind: UInt8, correlationID: UInt64 = 1, version: UInt8 = WireProtocolVersion.current, flags: UInt16 = 0, body: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(WireFrame.headerSize + body.count))
        buffer.writeInteger(version)
        buffer.writeInteger(kind)
        buffer.writeInteger(flags)
        buffer.writeInteger(correlationID)
        buffer.writeBytes(body)
        return buffer
    }

    static func bytes(_ hex: String) -> [UInt8] {
        Array(ByteBuffer(hex: hex).readableBytesView)
    }

    @Test("every golden frame split at every byte boundary decodes (ByteToMessageDecoderVerifier)")
    func verifier() throws {
        let pairs = GoldenFrames.all.map { (ByteBuffer(hex: $0.hex), [$0.frame]) }
        try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) { WireFrameDecoder() }
    }

    @Test("several frames in one buffer decode in order")
    func concatenated() throws {
        var input = ByteBuffer()
        for golden in GoldenFrames.all { input.writeImmutableBuffer(ByteBuffer(hex: golden.hex)) }
        try ByteToMessageDecoderVerifier.verifyDecoder(
            inputOutputPairs: [(input, GoldenFrames.all.map(\.frame))]
        ) { WireFrameDecoder() }
    }

    @Test("a length over the maximum is refused from the 4-byte prefix alone")
    func tooLargeFromHeader() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WireFrameDecoder(maximumLength: 1024)))
        var prefix = ByteBuffer()
        prefix.writeInteger(UInt32(1025))
        #expect {
            try channel.writeInbound(prefix)
        } throws: { error in
            (error as? WireError)?.code == WireError.Code.frameTooLarge
        }
        _ = try? channel.finish()
    }

    @Test("the first frame is held to its own cap from the prefix alone; later frames to the maximum")
    func firstFrameCap() throws {
        let decoder = WireFrameDecoder(maximumLength: 1 << 20, firstFrameMaximumLength: 4096)
        let refusing = EmbeddedChannel(handler: ByteToMessageHandler(decoder))
        var prefix = ByteBuffer()
        prefix.writeInteger(UInt32(900 * 1024))
        #expect {
            try refusing.writeInbound(prefix)
        } throws: { error in
            (error as? WireError)?.code == WireError.Code.frameTooLarge
        }
        _ = try? refusing.finish()

        let accepting = EmbeddedChannel(handler: ByteToMessageHandler(decoder))
        let body = [UInt8](repeating: 0x41, count: 8192)
        try accepting.writeInbound(Self.rawFrame(kind: WireMessageKind.ping.rawValue, body: []))
        try accepting.writeInbound(Self.rawFrame(kind: WireMessageKind.response.rawValue, body: body))
        #expect(try accepting.readInbound(as: WireFrame.self)?.message == .ping(.init()))
        #expect(try accepting.readInbound(as: WireFrame.self)?.message == .response(.init(payload: ByteBuffer(bytes: body))))
        _ = try? accepting.finish()
    }

    @Test("a frame exactly at the maximum is accepted")
    func atMaximum() throws {
        let body = [UInt8](repeating: 0x41, count: 1024 - WireFrame.headerSize)
        var buffer = Self.rawFrame(kind: WireMessageKind.response.rawValue, body: body)
        let frame = try WireFrameCodec.decode(&buffer, maximumLength: 1024)
        #expect(frame?.message == .response(.init(payload: ByteBuffer(bytes: body))))
    }

    @Test("EOF inside a frame is an error, not silence")
    func truncatedAtEOF() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WireFrameDecoder()))
        var buffer = ByteBuffer(hex: GoldenFrames.all[5].hex)
        let partial = buffer.readSlice(length: buffer.readableBytes - 1)!
        try channel.writeInbound(partial)
        #expect(throws: WireError.self) {
            _ = try channel.finish()
        }
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        var name: String
        var bytes: ByteBuffer
        var code: KontoErrorCode
        var testDescription: String { self.name }
    }

    static let malformed: [Malformed] = {
        let hello = WireMessageKind.hello.rawValue
        let s16 = { (string: String) -> [UInt8] in
            [UInt8(string.utf8.count >> 8), UInt8(string.utf8.count & 0xFF)] + Array(string.utf8)
        }
        let nonce = [0x00, 0x20] + [UInt8](repeating: 1, count: 32)
        let mac = [0x00, 0x20] + [UInt8](repeating: 2, count: 32)
        let methodHeader: [UInt8] = [1, 0x00, 0x01, 0x6D]
        let malformed = WireError.Code.malformedFrame
        return [
            // Header-level
            .init(name: "length 0", bytes: ByteBuffer(hex: "00000000"), code: malformed),
            .init(name: "length shorter than header", bytes: ByteBuffer(hex: "0000000b0208000000000000000000"), code: malformed),
            .init(name: "a version 1 frame (before mutual authentication)", bytes: rawFrame(kind: 8, version: 1, body: []), code: WireError.Code.unsupportedVersion),
            .init(name: "unsupported version", bytes: rawFrame(kind: 8, version: 9, body: []), code: WireError.Code.unsupportedVersion),
            .init(name: "unknown kind", bytes: rawFrame(kind: 99, body: []), code: malformed),
            .init(name: "nonzero flags", bytes: rawFrame(kind: 8, flags: 1, body: []), code: malformed),
            // One or more per kind
            .init(name: "hello: unknown stage", bytes: rawFrame(kind: hello, body: [2]), code: malformed),
            .init(name: "hello: short nonce", bytes: rawFrame(kind: hello, body: [0, 0, 1, 7, 1, 1]), code: malformed),
            .init(name: "hello: client mac runs past frame", bytes: rawFrame(kind: hello, body: [1] + s16("a") + [1, 1, 0, 0x20, 1]), code: malformed),
            .init(name: "hello: trailing byte", bytes: rawFrame(kind: hello, body: [0] + nonce + [1, 1, 0xFF]), code: malformed),
            .init(name: "hello: invalid UTF-8 service name", bytes: rawFrame(kind: hello, body: [1, 0, 2, 0xC3, 0x28, 1, 2] + mac + nonce), code: malformed),
            .init(name: "hello: client nonce missing", bytes: rawFrame(kind: hello, body: [1] + s16("a") + [1, 2] + mac), code: malformed),
            .init(name: "hello: client nonce of 31 bytes", bytes: rawFrame(kind: hello, body: [1] + s16("a") + [1, 2] + mac + [0x00, 0x1F] + [UInt8](repeating: 1, count: 31)), code: malformed),
            .init(name: "welcome: mac missing", bytes: rawFrame(kind: 2, body: [2] + s16("p") + [0, 0, 0, 0, 0, 1, 0, 0, 4, 0]), code: malformed),
            .init(name: "welcome: method count beyond frame", bytes: rawFrame(kind: 2, body: [1] + s16("p") + [0, 5] + s16("a")), code: malformed),
            .init(name: "request: no method header", bytes: rawFrame(kind: 3, body: [0]), code: malformed),
            .init(name: "request: invalid UTF-8 method", bytes: rawFrame(kind: 3, body: [1, 1, 0, 2, 0xFF, 0xFE]), code: malformed),
            .init(name: "request: empty method", bytes: rawFrame(kind: 3, body: [1, 1, 0, 0]), code: malformed),
            .init(name: "request: duplicate method", bytes: rawFrame(kind: 3, body: [2] + methodHeader + methodHeader), code: malformed),
            .init(name: "request: header runs past frame", bytes: rawFrame(kind: 3, body: [1, 1, 0, 9, 0x6D]), code: malformed),
            .init(name: "request: timeout header of 2 bytes", bytes: rawFrame(kind: 3, body: [2] + methodHeader + [2, 0, 2, 0, 1]), code: malformed),
            .init(name: "response: reserved flag set", bytes: rawFrame(kind: 4, flags: 0x8000, body: [1]), code: malformed),
            .init(name: "error: retryable flag 2", bytes: rawFrame(kind: 5, body: s16("c") + s16("m") + [2]), code: malformed),
            .init(name: "error: missing retryable flag", bytes: rawFrame(kind: 5, body: s16("c") + s16("m")), code: malformed),
            .init(name: "event: topic runs past frame", bytes: rawFrame(kind: 6, body: [0, 10, 0x61]), code: malformed),
            .init(name: "ack: non-empty body", bytes: rawFrame(kind: 7, body: [0]), code: malformed),
            .init(name: "ping: non-empty body", bytes: rawFrame(kind: 8, body: [0]), code: malformed),
            .init(name: "pong: non-empty body", bytes: rawFrame(kind: 9, body: [0, 0]), code: malformed),
            .init(name: "goaway: truncated last id", bytes: rawFrame(kind: 10, body: [0, 0, 0]), code: malformed),
            .init(name: "goaway: trailing byte", bytes: rawFrame(kind: 10, body: [0, 0, 0, 0, 0, 0, 0, 1] + s16("r") + [0]), code: malformed),
        ]
    }()

    @Test("malformed input is refused with a stable code", arguments: Self.malformed)
    func refusesMalformed(_ input: Malformed) {
        var buffer = input.bytes
        #expect {
            _ = try WireFrameCodec.decode(&buffer)
        } throws: { error in
            (error as? WireError)?.code == input.code
        }
    }

    @Test("malformed input is refused by the channel decoder too", arguments: Self.malformed)
    func channelRefusesMalformed(_ input: Malformed) throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(WireFrameDecoder()))
        #expect {
            try channel.writeInbound(input.bytes)
        } throws: { error in
            (error as? WireError)?.code == input.code
        }
        _ = try? channel.finish()
    }
}
