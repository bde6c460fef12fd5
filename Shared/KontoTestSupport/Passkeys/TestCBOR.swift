/// A small CBOR encoder (RFC 8949, definite lengths, shortest arguments) for test authenticators to write attestation
/// objects and COSE keys with, including the malformed ones hostile tests send.
public indirect enum TestCBOR: Sendable, Equatable {
    case int(Int)
    case bytes([UInt8])
    case text(String)
    case array([TestCBOR])
    case map([(TestCBOR, TestCBOR)])
    case bool(Bool)

    public static func == (left: TestCBOR, right: TestCBOR) -> Bool { left.encoded == right.encoded }

    public var encoded: [UInt8] {
        switch self {
        case .int(let value):
            value >= 0 ? Self.head(0, UInt64(value)) : Self.head(1, UInt64(-1 - value))
        case .bytes(let value):
            Self.head(2, UInt64(value.count)) + value
        case .text(let value):
            Self.head(3, UInt64(value.utf8.count)) + Array(value.utf8)
        case .array(let items):
            Self.head(4, UInt64(items.count)) + items.flatMap(\.encoded)
        case .map(let entries):
            Self.head(5, UInt64(entries.count)) + entries.flatMap { $0.0.encoded + $0.1.encoded }
        case .bool(let value):
            [value ? 0xF5 : 0xF4]
        }
    }

    private static func head(_ major: UInt8, _ argument: UInt64) -> [UInt8] {
        let type = major << 5
        switch argument {
        case 0..<24: return [type | UInt8(argument)]
        case 24...0xFF: return [type | 24, UInt8(argument)]
        case 0x100...0xFFFF: return [type | 25] + withUnsafeBytes(of: UInt16(argument).bigEndian, Array.init)
        case 0x10000...0xFFFF_FFFF: return [type | 26] + withUnsafeBytes(of: UInt32(argument).bigEndian, Array.init)
        default: return [type | 27] + withUnsafeBytes(of: argument.bigEndian, Array.init)
        }
    }
}
