import KontoWire
import NIOCore

/// The fuzz input as a sequence of steps, shared by the server and client targets.
///
/// A byte of 0x00 or 0xF0...0xFF starts a frame in wire format (a frame under 16 MiB always starts
/// with 0x00; the high values let the decoder see oversized length prefixes). Any other byte is a
/// control step, and the target reads its arguments from the bytes that follow. So a plain
/// recording of frames is a valid input, and control steps can be spliced in anywhere.
public struct FuzzInput {
    public enum Step {
        case frame
        case control(UInt8)
        case end
    }

    public var buffer: ByteBuffer

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.buffer = ByteBuffer(bytes: bytes)
    }

    public static func isFrameStart(_ byte: UInt8) -> Bool {
        byte == 0x00 || byte >= 0xF0
    }

    /// What comes next; a control byte is consumed, a frame is left for ``decodeFrame(maximumLength:)``.
    public mutating func nextStep() -> Step {
        guard let byte = self.buffer.getInteger(at: self.buffer.readerIndex, as: UInt8.self) else { return .end }
        if Self.isFrameStart(byte) { return .frame }
        self.buffer.moveReaderIndex(forwardBy: 1)
        return .control(byte)
    }

    /// Decodes the frame at the cursor exactly as the channel's decoder would.
    public mutating func decodeFrame(maximumLength: Int) throws(WireError) -> WireFrame? {
        try WireFrameCodec.decode(&self.buffer, maximumLength: maximumLength)
    }

    /// Arguments read past the end are zero, so every input means something.
    public mutating func byte() -> UInt8 {
        self.buffer.readInteger(as: UInt8.self) ?? 0
    }

    public mutating func uint16() -> UInt16 {
        UInt16(self.byte()) << 8 | UInt16(self.byte())
    }

    /// 0...0xFFFFFF, enough to reach every length the formats allow.
    public mutating func uint24() -> Int {
        Int(self.byte()) << 16 | Int(self.byte()) << 8 | Int(self.byte())
    }

    public mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(self.byte()) }
        return value
    }

    /// Up to `maximum` raw bytes, their count taken from the next byte.
    public mutating func shortBytes(maximum: Int = 255) -> [UInt8] {
        let count = min(Int(self.byte()), maximum, self.buffer.readableBytes)
        return self.buffer.readBytes(length: count) ?? []
    }

    /// A short string from the input (invalid UTF-8 repaired, as a peer's text would be when quoted).
    public mutating func shortString() -> String {
        String(decoding: self.shortBytes(), as: UTF8.self)
    }

    /// A long, valid UTF-8 string of about `byteCount` bytes made from a repeated unit, so that a few
    /// input bytes reach fields of any size. Multi-byte units put character boundaries near every
    /// length limit, which is where a clamp can go wrong.
    public mutating func longString(byteCount: Int) -> String {
        let units = ["a", "é", "€", "😀", "e\u{301}"]
        let selector = self.byte()
        let unit = Int(selector) < units.count
            ? units[Int(selector)]
            : String(UnicodeScalar(0x21 + selector % 0x5E))
        let unitSize = unit.utf8.count
        let repeats = max(byteCount / unitSize, 0)
        return String(repeating: unit, count: repeats)
    }
}
