/// A direct JSON reader for stored values.
///
/// Decoding `AccountValue` through `JSONDecoder` tries each JSON type in turn and pays for a thrown
/// `DecodingError` on every miss; reading profiles back from the database is the hot path of
/// every load, so stored documents are read here, byte by byte, instead (RFC 8259).
extension AccountValue {
    public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    /// Parses one JSON document.
    public init(parsingJSON bytes: some Collection<UInt8>) throws(JSONParseError) {
        var parser = Parser(bytes: Array(bytes))
        self = try parser.document { parser throws(JSONParseError) in try parser.value(depth: 0) }
    }

    /// Parses a JSON object document into its members.
    public static func parseObject(json bytes: some Collection<UInt8>) throws(JSONParseError) -> [String: AccountValue] {
        guard case .object(let members) = try AccountValue(parsingJSON: bytes) else {
            throw JSONParseError(offset: 0, reason: "expected an object")
        }
        return members
    }

    /// Parses a JSON object document into the members named in `names`. The other members are skipped: their shape
    /// is checked, but no value is built (a load asks for a few keys of a larger stored document).
    public static func parseObject(json bytes: some Collection<UInt8>, keeping names: [String]) throws(JSONParseError) -> [String: AccountValue] {
        var parser = Parser(bytes: Array(bytes))
        return try parser.document { parser throws(JSONParseError) in
            guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "{") else {
                throw parser.error("expected an object")
            }
            return try parser.members(depth: 0, keeping: names)
        }
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        /// Deeper documents are refused rather than risking the stack.
        static let maximumDepth = 512

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        func error(_ reason: String) -> JSONParseError {
            JSONParseError(offset: index, reason: reason)
        }

        /// `body` reads the one value of the document; only whitespace may surround it.
        mutating func document<Result>(_ body: (inout Parser) throws(JSONParseError) -> Result) throws(JSONParseError) -> Result {
            skipWhitespace()
            let result = try body(&self)
            skipWhitespace()
            guard index == bytes.count else { throw error("trailing characters") }
            return result
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws(JSONParseError) -> AccountValue {
            guard depth < Self.maximumDepth else { throw error("nested too deeply") }
            guard index < bytes.count else { throw error("unexpected end") }
            switch bytes[index] {
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw error("unexpected character")
            }
        }

        mutating func literal(_ word: String) throws(JSONParseError) {
            let expected = Array(word.utf8)
            guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
                throw error("unexpected character")
            }
            index += expected.count
        }

        mutating func object(depth: Int) throws(JSONParseError) -> AccountValue {
            .object(try members(depth: depth, keeping: nil))
        }

        /// The members of the object at `index`; with `names`, only those, the others skipped.
        mutating func members(depth: Int, keeping names: [String]?) throws(JSONParseError) -> [String: AccountValue] {
            index += 1
            var members: [String: AccountValue] = [:]
            if let names {
                members.reserveCapacity(names.count)
            }
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return members
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                let name = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                skipWhitespace()
                if names?.contains(name) ?? true {
                    members[name] = try value(depth: depth + 1)
                } else {
                    try skipValue(depth: depth + 1)
                }
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return members
                } else {
                    throw error("expected ',' or '}'")
                }
            }
        }

        /// Moves past one value, checking its structure (brackets, separators, string ends) without building it.
        mutating func skipValue(depth: Int) throws(JSONParseError) {
            guard depth < Self.maximumDepth else { throw error("nested too deeply") }
            guard index < bytes.count else { throw error("unexpected end") }
            let (open, close): (UInt8, UInt8)
            switch bytes[index] {
            case UInt8(ascii: "\""):
                try skipString()
                return
            case UInt8(ascii: "{"): (open, close) = (UInt8(ascii: "{"), UInt8(ascii: "}"))
            case UInt8(ascii: "["): (open, close) = (UInt8(ascii: "["), UInt8(ascii: "]"))
            default:
                // Literals and numbers are short and build nothing on the heap.
                _ = try value(depth: depth)
                return
            }
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == close {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                if open == UInt8(ascii: "{") {
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                    try skipString()
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                    index += 1
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == close {
                    index += 1
                    return
                } else {
                    throw error(open == UInt8(ascii: "{") ? "expected ',' or '}'" : "expected ',' or ']'")
                }
            }
        }

        /// Moves past a string: its end found, control characters refused; escapes and UTF-8 are not decoded.
        mutating func skipString() throws(JSONParseError) {
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"):
                    index += 2
                case 0x00..<0x20:
                    throw error("control character in string")
                default:
                    index += 1
                }
            }
            throw error("unterminated string")
        }

        mutating func array(depth: Int) throws(JSONParseError) -> AccountValue {
            index += 1
            var elements: [AccountValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(elements)
                } else {
                    throw error("expected ',' or ']'")
                }
            }
        }

        mutating func string() throws(JSONParseError) -> String {
            index += 1
            let start = index
            // Fast path: no escapes.
            var isASCII = true
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    // ASCII needs no validation, and decoding a buffer skips the generic validating initialiser.
                    let text = isASCII
                        ? bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<index]), as: UTF8.self) }
                        : String(validating: bytes[start..<index], as: UTF8.self)
                    guard let text else { throw error("invalid UTF-8") }
                    index += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                guard byte >= 0x20 else { throw error("control character in string") }
                if byte >= 0x80 { isASCII = false }
                index += 1
            }
            var utf8 = Array(bytes[start..<index])
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: utf8, as: UTF8.self) else { throw error("invalid UTF-8") }
                    index += 1
                    return text
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw error("unexpected end") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                    case UInt8(ascii: "b"): utf8.append(0x08)
                    case UInt8(ascii: "f"): utf8.append(0x0C)
                    case UInt8(ascii: "n"): utf8.append(0x0A)
                    case UInt8(ascii: "r"): utf8.append(0x0D)
                    case UInt8(ascii: "t"): utf8.append(0x09)
                    case UInt8(ascii: "u"): utf8.append(contentsOf: try unicodeEscape())
                    default: throw error("invalid escape")
                    }
                default:
                    guard byte >= 0x20 else { throw error("control character in string") }
                    utf8.append(byte)
                    index += 1
                }
            }
            throw error("unterminated string")
        }

        /// After `\u`: one code point, or a surrogate pair written as two escapes.
        mutating func unicodeEscape() throws(JSONParseError) -> [UInt8] {
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw error("unpaired surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid code point") }
            return Array(String(Character(unicode)).utf8)
        }

        mutating func hex4() throws(JSONParseError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("unexpected end") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: throw error("invalid \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        mutating func number() throws(JSONParseError) -> AccountValue {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            var isInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            if isInteger, let integer = Int64(text) {
                return .integer(integer)
            }
            guard let double = Double(text), double.isFinite else { throw JSONParseError(offset: start, reason: "number out of range") }
            return .double(double)
        }

        func isDigit(_ byte: UInt8) -> Bool {
            byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        }
    }
}
