/// A direct JSON writer for values, the counterpart of the direct reader (`AccountValue(parsingJSON:)`).
///
/// Every load answers with the account's values; `JSONEncoder` spends more on its generic container
/// machinery than the rest of such a call, so hot payloads are written here instead. The output
/// means what `JSONEncoder`'s does (RFC 8259, UTF-8, no whitespace); key order is unspecified.
extension AccountValue {
    /// A value JSON cannot carry (a non-finite double), as `JSONEncoder` refuses it.
    public struct JSONWriteError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String { "a non-finite number cannot be written as JSON" }
    }

    /// Appends the JSON form of this value.
    public func writeJSON(into output: inout [UInt8]) throws(JSONWriteError) {
        switch self {
        case .string(let value):
            Self.writeJSONString(value, into: &output)
        case .bool(let value):
            output.append(contentsOf: value ? Self.trueLiteral : Self.falseLiteral)
        case .integer(let value):
            output.append(contentsOf: String(value).utf8)
        case .double(let value):
            guard value.isFinite else { throw JSONWriteError() }
            // `description` is the shortest form that reads back as the same double, and is JSON for finite values.
            output.append(contentsOf: value.description.utf8)
        case .array(let values):
            output.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                try value.writeJSON(into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            try Self.writeJSONObject(members, into: &output)
        case .null:
            output.append(contentsOf: Self.nullLiteral)
        }
    }

    /// Appends `members` as one JSON object.
    public static func writeJSONObject(_ members: [String: AccountValue], into output: inout [UInt8]) throws(JSONWriteError) {
        output.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in members {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            writeJSONString(key, into: &output)
            output.append(UInt8(ascii: ":"))
            try value.writeJSON(into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Appends `value` as a JSON string: quotes, backslashes and control characters escaped, the rest as UTF-8.
    public static func writeJSONString(_ value: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                output.append(UInt8(ascii: "\\"))
                output.append(byte)
            case 0x0A:
                output.append(UInt8(ascii: "\\"))
                output.append(UInt8(ascii: "n"))
            case 0x0D:
                output.append(UInt8(ascii: "\\"))
                output.append(UInt8(ascii: "r"))
            case 0x09:
                output.append(UInt8(ascii: "\\"))
                output.append(UInt8(ascii: "t"))
            case 0..<0x20:
                output.append(contentsOf: unicodeEscapePrefix)
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    private static let trueLiteral = Array("true".utf8)
    private static let falseLiteral = Array("false".utf8)
    private static let nullLiteral = Array("null".utf8)
    private static let unicodeEscapePrefix = Array("\\u00".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)
}
