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
        #expect(Timestamp(milliseconds: 0).adding(.seconds(Int64.max)).milliseconds == Timestamp.validMilliseconds.upperBound)
        #expect(Timestamp(milliseconds: 0).adding(.seconds(Int64.min)).milliseconds == Timestamp.validMilliseconds.lowerBound)
        #expect(Duration.seconds(Int64.max).milliseconds == .max && Duration.seconds(Int64.min).milliseconds == .min)
    }

    @Test("milliseconds from outside (a cursor's) are refused beyond the years 1 to 9999; a timestamp made of any other number is clamped, so no date made of it traps an encoder")
    func outsideMilliseconds() {
        for milliseconds: Int64 in [99_999_999_999_999_999, .max, .min, Timestamp.validMilliseconds.upperBound + 1, Timestamp.validMilliseconds.lowerBound - 1] {
            #expect(Timestamp(checkingMilliseconds: milliseconds) == nil, "\(milliseconds)")
        }
        #expect(Timestamp(checkingMilliseconds: 1_800_000_000_123)?.milliseconds == 1_800_000_000_123)
        #expect(Timestamp(milliseconds: .max).milliseconds == Timestamp.validMilliseconds.upperBound)
        #expect(Timestamp(milliseconds: .min).milliseconds == Timestamp.validMilliseconds.lowerBound)
        #expect(Timestamp(iso8601: "99999-01-01T00:00:00Z") == nil || Timestamp.validMilliseconds.contains(Timestamp(iso8601: "99999-01-01T00:00:00Z")!.milliseconds))
    }
}

/// The direct ISO 8601 writer and reader (`Timestamp+ISO8601.swift`) against Foundation's style, the straightforward
/// version they stand in for.
@Suite("Timestamps: direct ISO 8601 against Foundation's")
struct TimestampISO8601Tests {
    /// Edges (1583, leap days, 1900, 2000, the ends of months and of the range) and a spread over the whole range.
    static var samples: [Int64] {
        var values: [Int64] = [
            0, -1, 1, 999, -999, -1000, 86_399_999, -86_400_000, 951_782_400_000, 951_868_799_999, 4_107_542_399_999,
            -2_203_977_600_000, -2_208_988_800_001, -12_212_553_600_000, -12_212_553_599_999, Timestamp.validMilliseconds.upperBound,
            1_767_225_600_123, 1_709_164_800_000, 1_709_251_199_999,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            values.append(Int64.random(in: -12_212_553_600_000...Timestamp.validMilliseconds.upperBound, using: &generator))
        }
        for _ in 0..<500 {
            values.append(Int64.random(in: 1_500_000_000_000...2_100_000_000_000, using: &generator))
        }
        return values
    }

    @Test("writes what Foundation's style writes, and reads it back exactly, from 1583 to 9999")
    func agreesWithFoundation() {
        for milliseconds in Self.samples {
            let timestamp = Timestamp(milliseconds: milliseconds)
            let foundation = timestamp.foundationISO8601
            #expect(timestamp.description == foundation, "\(milliseconds)")
            #expect(Timestamp(iso8601: foundation) == timestamp, "\(foundation)")
            #expect(Timestamp(foundationISO8601: timestamp.description) == timestamp, "\(milliseconds)")
        }
    }

    @Test("fractions of every length read as Foundation's path reads them", arguments: [
        "2026-03-01T12:34:56Z", "2026-03-01T12:34:56.5Z", "2026-03-01T12:34:56.05Z", "2026-03-01T12:34:56.123Z",
        "2026-03-01T12:34:56.1239Z", "2024-02-29T23:59:59.999999999Z", "1583-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
    ])
    func fractions(_ text: String) {
        #expect(Timestamp(iso8601: text) != nil)
        #expect(Timestamp(iso8601: text) == Timestamp(foundationISO8601: text))
    }

    @Test("what the direct reader leaves to Foundation reads as before (earlier years, offsets); what is no date is refused", arguments: [
        "1582-10-15T00:00:00.000Z", "0001-01-01T00:00:00.000Z", "2026-01-01T00:00:00+01:00", "2026-02-29T00:00:00Z",
        "2026-13-01T00:00:00Z", "2026-01-32T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z",
        "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00.1a2Z", "2026-01-01t00:00:00z", "2026-01-01T00:00:00", "+2026-01-01T00:00:00Z",
        "２０２６-01-01T00:00:00Z", "",
    ])
    func leftToFoundation(_ text: String) {
        #expect(Timestamp(iso8601: text) == Timestamp(foundationISO8601: text), "\(text)")
    }

    @Test("before 1583 the text is Foundation's, and reads back exactly")
    func earlyYears() {
        for milliseconds: Int64 in [Timestamp.validMilliseconds.lowerBound, -30_000_000_000_000, -12_212_553_600_001] {
            let timestamp = Timestamp(milliseconds: milliseconds)
            #expect(timestamp.description == timestamp.foundationISO8601)
            #expect(Timestamp(iso8601: timestamp.description) == timestamp)
        }
    }
}
