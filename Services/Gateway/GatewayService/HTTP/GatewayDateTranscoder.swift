import Foundation
import OpenAPIRuntime

/// The times the API reads (the admin API's `createdAfter`, a key's `expiresAt`) as RFC 3339 allows them: with or
/// without fractional seconds, in UTC or at any offset. The runtime's `.iso8601` transcoder refuses fractional seconds,
/// and Foundation's parser refuses offsets beyond ±18:00, which RFC 3339's grammar allows up to ±23:59 (both found by
/// schemathesis): such an offset is read here and the rest as UTC. Written as the runtime's default writes.
struct GatewayDateTranscoder: DateTranscoder {
    private static let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    func encode(_ date: Date) throws -> String {
        date.formatted(.iso8601)
    }

    func decode(_ text: String) throws -> Date {
        if let date = Self.parse(text) { return date }
        if let (local, seconds) = Self.splitOffset(text), let date = Self.parse(local + "Z") {
            return date.addingTimeInterval(-Double(seconds))
        }
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Expected an RFC 3339 date and time."))
    }

    private static func parse(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: fractional))
    }

    /// `…±HH:MM` as the text before the offset and the offset in seconds east of UTC (hours 00–23, minutes 00–59).
    static func splitOffset(_ text: String) -> (String, Int)? {
        let bytes = Array(text.utf8)
        guard bytes.count > 6 else { return nil }
        let offset = bytes[(bytes.count - 6)...].map { $0 }
        guard offset[0] == UInt8(ascii: "+") || offset[0] == UInt8(ascii: "-"), offset[3] == UInt8(ascii: ":") else { return nil }
        let digits = [offset[1], offset[2], offset[4], offset[5]]
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        let values = digits.map { Int($0 - UInt8(ascii: "0")) }
        let (hours, minutes) = (values[0] * 10 + values[1], values[2] * 10 + values[3])
        guard hours <= 23, minutes <= 59 else { return nil }
        let seconds = (hours * 3_600 + minutes * 60) * (offset[0] == UInt8(ascii: "-") ? -1 : 1)
        return (String(decoding: bytes[..<(bytes.count - 6)], as: UTF8.self), seconds)
    }
}
