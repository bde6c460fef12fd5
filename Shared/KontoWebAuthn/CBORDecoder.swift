/// Decodes CBOR (RFC 8949) from bytes a client sent, bounded before anything is buffered: every length is checked
/// against the bytes that remain before it is read, nesting is limited, indefinite lengths are refused.
///
/// Why by hand: no CBOR package is in the mirror (swift-certificates' ASN.1 is DER). The tests check it against
/// RFC 8949's appendix A, hostile inputs (each refused with its reason), every prefix of an attestation-shaped item
/// and random bytes. For passkeys (issue 30), still to come: attestation objects and COSE keys are read with it.
public struct CBORDecoder {
    public struct DecodingError: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Reason: String, Sendable {
            case truncated, indefiniteLength, tooDeep, invalidUTF8, trailingBytes, duplicateKey, unsupported
        }

        public var reason: Reason
        /// Where in the input.
        public var offset: Int
        public var description: String { "CBOR \(reason.rawValue) at byte \(offset)" }
    }

    public static let maximumDepth = 16

    private let bytes: [UInt8]
    private var position = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// One item that is the whole input.
    public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> CBORValue {
        var decoder = CBORDecoder(bytes)
        let value = try decoder.item(depth: 0)
        guard decoder.position == bytes.count else { throw DecodingError(reason: .trailingBytes, offset: decoder.position) }
        return value
    }

    /// One item at the start of the input, and how many bytes it took (an attestation's authenticator data is
    /// followed by its extensions this way).
    public static func decodePrefix(_ bytes: [UInt8]) throws(DecodingError) -> (value: CBORValue, length: Int) {
        var decoder = CBORDecoder(bytes)
        let value = try decoder.item(depth: 0)
        return (value, decoder.position)
    }

    private mutating func take(_ count: Int) throws(DecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - position else { throw DecodingError(reason: .truncated, offset: position) }
        defer { position += count }
        return bytes[position..<position + count]
    }

    private mutating func argument(_ additional: UInt8) throws(DecodingError) -> UInt64 {
        switch additional {
        case 0..<24: return UInt64(additional)
        case 24...27:
            let count = 1 << Int(additional - 24)
            return try take(count).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        case 31: throw DecodingError(reason: .indefiniteLength, offset: position - 1)
        default: throw DecodingError(reason: .unsupported, offset: position - 1)
        }
    }

    /// A length that fits what remains (each item takes at least a byte), so no allocation outgrows the input.
    private mutating func length(_ additional: UInt8) throws(DecodingError) -> Int {
        let start = position - 1
        let value = try argument(additional)
        guard value <= UInt64(bytes.count - position) else { throw DecodingError(reason: .truncated, offset: start) }
        return Int(value)
    }

    private mutating func item(depth: Int) throws(DecodingError) -> CBORValue {
        guard depth <= Self.maximumDepth else { throw DecodingError(reason: .tooDeep, offset: position) }
        let initial = try take(1).first!
        let major = initial >> 5, additional = initial & 0x1F
        switch major {
        case 0: return .unsigned(try argument(additional))
        case 1: return .negative(try argument(additional))
        case 2: return .bytes(Array(try take(try length(additional))))
        case 3:
            let start = position
            guard let text = String(validating: try take(try length(additional)), as: UTF8.self) else {
                throw DecodingError(reason: .invalidUTF8, offset: start)
            }
            return .text(text)
        case 4:
            let count = try length(additional)
            var items: [CBORValue] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try item(depth: depth + 1)) }
            return .array(items)
        case 5:
            let count = try length(additional)
            var entries: [CBORMapEntry] = []
            for _ in 0..<count {
                let keyOffset = position
                let key = try item(depth: depth + 1)
                guard !entries.contains(where: { $0.key == key }) else { throw DecodingError(reason: .duplicateKey, offset: keyOffset) }
                entries.append(CBORMapEntry(key: key, value: try item(depth: depth + 1)))
            }
            return .map(entries)
        case 6: return .tagged(try argument(additional), try item(depth: depth + 1))
        default:
            switch additional {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 23: return .undefined
            case 25: return .float(Double(Float16(bitPattern: UInt16(try argument(additional)))))
            case 26: return .float(Double(Float(bitPattern: UInt32(try argument(additional)))))
            case 27: return .float(Double(bitPattern: try argument(additional)))
            default: throw DecodingError(reason: .unsupported, offset: position - 1)
            }
        }
    }
}
