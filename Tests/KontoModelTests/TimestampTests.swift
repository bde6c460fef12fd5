import Foundation
import KontoModel
import Testing

@Suite("Timestamps")
struct TimestampTests {
    @Test("written in UTC with milliseconds, read back exactly", arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (1_767_225_600_123, "2026-01-01T00:00:00.123Z"),
        (-1, "1969-12-31T23:59:59.999Z"),
    ])
    func roundTrip(milliseconds: Int64, text: String) throws {
        let timestamp = Timestamp(milliseconds: milliseconds)
        #expect(timestamp.description == text)
        #expect(Timestamp(iso8601: text) == timestamp)
        let json = try JSONEncoder().encode([timestamp])
        #expect(try JSONDecoder().decode([Timestamp].self, from: json) == [timestamp])
    }

    @Test("fewer or more fraction digits, or none, are read; what is not a timestamp is refused")
    func reading() {
        #expect(Timestamp(iso8601: "2026-01-01T00:00:00Z")?.milliseconds == 1_767_225_600_000)
        #expect(Timestamp(iso8601: "2026-01-01T00:00:00.5Z")?.milliseconds == 1_767_225_600_500)
        #expect(Timestamp(iso8601: "2026-01-01T00:00:00.123456Z")?.milliseconds == 1_767_225_600_123)
        #expect(Timestamp(iso8601: "yesterday") == nil)
        #expect(Timestamp(iso8601: "2026-01-01T00:00:00.Z") == nil)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Timestamp].self, from: Data(#"["soon"]"#.utf8)) }
    }

    @Test("ordered by time; adding seconds moves it")
    func ordering() {
        let start = Timestamp(milliseconds: 1_000)
        #expect(start < start.adding(seconds: 1))
        #expect(start.adding(seconds: 60).milliseconds == 61_000)
    }

    @Test("a date from outside is checked before it is converted: nothing non-finite or beyond the years 1 to 9999 becomes a timestamp, and no conversion traps")
    func outsideDates() {
        #expect(Timestamp(checkingSeconds: 1_800_000_000.5)?.milliseconds == 1_800_000_000_500)
        for seconds in [Double.nan, .infinity, -.infinity, 1e300, 9.3e18, 253_402_300_800, -62_135_596_801] {
            #expect(Timestamp(checkingSeconds: seconds) == nil, "\(seconds)")
        }
        #expect(Timestamp(checkingSeconds: 253_402_300_799)?.milliseconds == 253_402_300_799_000)
        // Clamped, not trapped: a Date far out, and arithmetic past Int64.
        #expect(Timestamp(Date(timeIntervalSince1970: 1e300)).milliseconds == Timestamp.validMilliseconds.upperBound)
        #expect(Timestamp(Date(timeIntervalSince1970: -1e300)).milliseconds == Timestamp.validMilliseconds.lowerBound)
        #expect(Timestamp(milliseconds: 0).adding(seconds: .max).milliseconds == Timestamp.validMilliseconds.upperBound)
        #expect(Timestamp(milliseconds: 0).adding(seconds: .min).milliseconds == Timestamp.validMilliseconds.lowerBound)
        #expect(Timestamp(milliseconds: 1_000).adding(seconds: 2).milliseconds == 3_000)
    }
}
