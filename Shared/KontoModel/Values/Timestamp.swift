import Foundation

/// A moment as it travels between services: an ISO 8601 string in UTC with milliseconds
/// (`2026-01-01T12:00:00.123Z`), whatever the coder's date strategy. Whole milliseconds, so a decoded timestamp
/// equals the encoded one exactly.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let milliseconds: Int64

    public init(_ date: Date) {
        self.milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public static var now: Timestamp { Timestamp(Date()) }

    public var date: Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    public func adding(seconds: Int64) -> Timestamp {
        Timestamp(milliseconds: milliseconds + seconds * 1000)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    public var description: String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let fraction = String(milliseconds - seconds * 1000)
        let base = Date(timeIntervalSince1970: Double(seconds)).formatted(.iso8601)
        return String(base.dropLast()) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }

    /// Reads an ISO 8601 date and time in UTC, with or without fractional seconds (kept to milliseconds).
    public init?(iso8601 string: String) {
        var base = string
        var fraction: Int64 = 0
        if let dot = string.firstIndex(of: ".") {
            let digits = string[string.index(after: dot)...].prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty else { return nil }
            fraction = Int64((digits + "000").prefix(3)) ?? 0
            base = String(string[..<dot]) + String(string[string.index(after: dot)...].dropFirst(digits.count))
        }
        guard let whole = try? Date.ISO8601FormatStyle().parse(base) else { return nil }
        self.milliseconds = Int64(whole.timeIntervalSince1970.rounded()) * 1000 + fraction
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let timestamp = Timestamp(iso8601: try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Expected an ISO 8601 timestamp.")
        }
        self = timestamp
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
