import KontoWire
import NIOCore

/// Builds inputs in the ``FuzzInput`` format, for the generated seed corpora.
public struct FuzzInputWriter {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// A control step: its byte, then its arguments.
    public mutating func step(_ control: UInt8, _ arguments: [UInt8] = []) {
        precondition(!FuzzInput.isFrameStart(control), "control byte \(control) would read as a frame")
        self.bytes.append(control)
        self.bytes.append(contentsOf: arguments)
    }

    public mutating func frame(_ frame: WireFrame) {
        var buffer = ByteBuffer()
        WireFrameCodec.encode(frame, into: &buffer)
        self.bytes.append(contentsOf: buffer.readableBytesView)
    }

    /// Bytes as they are, e.g. a deliberately broken frame.
    public mutating func raw(_ bytes: [UInt8]) {
        self.bytes.append(contentsOf: bytes)
    }

    public static func uint16(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    public static func uint24(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    public static func uint64(_ value: UInt64) -> [UInt8] {
        (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    public static func shortBytes(_ string: String) -> [UInt8] {
        let utf8 = Array(string.utf8.prefix(255))
        return [UInt8(utf8.count)] + utf8
    }
}
