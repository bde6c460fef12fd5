import Foundation

/// Finds a name that appears twice in one JSON object, anywhere in a document (RFC 7519 §4: a JWT with duplicate
/// claim names must be refused, or rejected by parsers that disagree).
///
/// Why a scanner of our own: Foundation's parsers accept duplicates silently and disagree about them — JSONDecoder
/// keeps the first `sub` of `{"sub":"a","sub":"b"}`, JSONSerialization the last (measured here on Swift 6.3) — and no
/// package in reach reports them. It reads only the structure (strings with their escapes, nesting to a bound); each
/// name is unescaped by JSONDecoder, so `"\u0073ub"` and `"sub"` are one name. `JSONDuplicateKeysTests` checks it
/// against JSONSerialization on documents without duplicates.
enum JSONDuplicateKeys {
    enum Outcome: Equatable {
        case unique
        case duplicate(String)
        case malformed
    }

    static let maximumDepth = 32

    static func scan(_ bytes: [UInt8]) -> Outcome {
        var scanner = Scanner(bytes: bytes)
        do {
            scanner.skipWhitespace()
            try scanner.value(depth: 0)
            scanner.skipWhitespace()
            guard scanner.index == bytes.count else { return .malformed }
            return scanner.duplicate.map { .duplicate($0) } ?? .unique
        } catch {
            return scanner.duplicate.map { .duplicate($0) } ?? .malformed
        }
    }

    private struct Malformed: Error {}

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var duplicate: String?

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipWhitespace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws {
            guard index < bytes.count, bytes[index] == byte else { throw Malformed() }
            index += 1
        }

        mutating func value(depth: Int) throws {
            guard depth < JSONDuplicateKeys.maximumDepth, index < bytes.count else { throw Malformed() }
            switch bytes[index] {
            case UInt8(ascii: "{"): try object(depth: depth)
            case UInt8(ascii: "["): try array(depth: depth)
            case UInt8(ascii: "\""): _ = try string()
            default:
                // A number or a literal: up to the next structural character; its form is the real parser's to judge.
                let start = index
                while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
                    index += 1
                }
                guard index > start else { throw Malformed() }
            }
        }

        mutating func object(depth: Int) throws {
            try expect(UInt8(ascii: "{"))
            var names: Set<String> = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                let token = try string()
                guard let name = try? JSONDecoder().decode(String.self, from: Data(token)) else { throw Malformed() }
                if !names.insert(name).inserted, duplicate == nil { duplicate = name }
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                try value(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw Malformed() }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return
            }
        }

        mutating func array(depth: Int) throws {
            try expect(UInt8(ascii: "["))
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                try value(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else { throw Malformed() }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"))
                return
            }
        }

        /// The string's token, quotes included (escapes left as they are).
        mutating func string() throws -> ArraySlice<UInt8> {
            let start = index
            try expect(UInt8(ascii: "\""))
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    return bytes[start..<index]
                default: index += 1
                }
            }
            throw Malformed()
        }
    }
}
