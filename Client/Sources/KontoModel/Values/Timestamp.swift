import Foundation

/// A moment as it travels between services: an ISO 8601 string in UTC with milliseconds
/// (`2026-01-01T12:00:00.123Z`), whatever the coder's date strategy. Whole milliseconds, so a decoded timestamp
/// equals the encoded one exactly.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let milliseconds: Int64

    /// The moments Konto keeps: years 1 to 9999 in UTC (ISO 8601's four-digit years; PostgreSQL's timestamptz holds
    /// them all). Anything from outside is checked against it before it is converted or stored.
    public static let validMilliseconds: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// `date`, clamped into ``validMilliseconds`` (a date from outside is checked with ``init(checkingSeconds:)``
    /// first; the clamp only keeps a conversion from trapping).
    public init(_ date: Date) {
        self.init(clamping: date.timeIntervalSince1970 * 1000)
    }

    /// Seconds since 1970 from outside (a token's `exp`, a peer's number): nil unless finite and within
    /// ``validMilliseconds``.
    public init?(checkingSeconds seconds: Double) {
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds.isFinite, Double(Self.validMilliseconds.lowerBound) <= milliseconds, milliseconds <= Double(Self.validMilliseconds.upperBound) else {
            return nil
        }
        self.milliseconds = Int64(milliseconds)
    }

    private init(clamping milliseconds: Double) {
        let rounded = milliseconds.rounded()
        if rounded.isNaN {
            self.milliseconds = 0
        } else if rounded <= Double(Self.validMilliseconds.lowerBound) {
            self.milliseconds = Self.validMilliseconds.lowerBound
        } else if rounded >= Double(Self.validMilliseconds.upperBound) {
            self.milliseconds = Self.validMilliseconds.upperBound
        } else {
            self.milliseconds = Int64(rounded)
        }
    }

    /// Clamped into ``validMilliseconds``: a moment outside them cannot be held, so nothing made from one (a `Date`
    /// PostgresNIO encodes, an ISO 8601 text) can trap. A number from outside is checked with
    /// ``init(checkingMilliseconds:)`` instead, and refused.
    public init(milliseconds: Int64) {
        self.milliseconds = min(max(milliseconds, Self.validMilliseconds.lowerBound), Self.validMilliseconds.upperBound)
    }

    /// Milliseconds since 1970 from outside (a cursor's place): nil outside ``validMilliseconds``.
    public init?(checkingMilliseconds milliseconds: Int64) {
        guard Self.validMilliseconds.contains(milliseconds) else { return nil }
        self.milliseconds = milliseconds
    }

    public static var now: Timestamp { Timestamp(Date()) }

    public var date: Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Clamped into ``validMilliseconds``, never trapping on overflow.
    public func adding(seconds: Int64) -> Timestamp {
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (sum, overflowAgain) = milliseconds.addingReportingOverflow(scaled)
        guard !overflow, !overflowAgain else { return Timestamp(milliseconds: seconds < 0 ? Self.validMilliseconds.lowerBound : Self.validMilliseconds.upperBound) }
        return Timestamp(milliseconds: min(max(sum, Self.validMilliseconds.lowerBound), Self.validMilliseconds.upperBound))
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }

    public var description: String {
        if let direct = Self.directISO8601(milliseconds) { return direct }
        return foundationISO8601
    }

    /// The same text through Foundation's ISO 8601 style: the years before 1583, and the reference its tests hold the
    /// direct writer to.
    public var foundationISO8601: String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let fraction = String(milliseconds - seconds * 1000)
        let base = Date(timeIntervalSince1970: Double(seconds)).formatted(.iso8601)
        return String(base.dropLast()) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction + "Z"
    }

    /// Reads an ISO 8601 date and time in UTC, with or without fractional seconds (kept to milliseconds).
    public init?(iso8601 string: String) {
        if let milliseconds = Self.directMilliseconds(iso8601: string) {
            self.init(milliseconds: milliseconds)
            return
        }
        self.init(foundationISO8601: string)
    }

    /// The same reading through Foundation's ISO 8601 style: every shape the direct reader leaves, and the reference its
    /// tests hold it to.
    public init?(foundationISO8601 string: String) {
        var base = string
        var fraction: Int64 = 0
        if let dot = string.firstIndex(of: ".") {
            let digits = string[string.index(after: dot)...].prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty else { return nil }
            fraction = Int64((digits + "000").prefix(3)) ?? 0
            base = String(string[..<dot]) + String(string[string.index(after: dot)...].dropFirst(digits.count))
        }
        guard let whole = try? Date.ISO8601FormatStyle().parse(base), let seconds = Timestamp(checkingSeconds: whole.timeIntervalSince1970.rounded()),
              Self.validMilliseconds.contains(seconds.milliseconds + fraction)
        else { return nil }
        self.milliseconds = seconds.milliseconds + fraction
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
