/// ISO 8601 without Foundation's format style, for the timestamps every wire payload carries.
///
/// Why: Foundation's `Date.ISO8601FormatStyle` costs about 5 µs to write and 5 µs to read a timestamp, and a session
/// check's answer carries three: `konto-bench codec` measured 35.5 µs to write and read that answer with the direct
/// JSON codec against 39.7 µs through `JSONEncoder`, the timestamps nearly all of it. This is the straightforward
/// civil-date arithmetic (Howard Hinnant's `days_from_civil` / `civil_from_days`) for the one shape Konto writes,
/// `yyyy-MM-ddTHH:mm:ss[.fff…]Z`, in the years 1583 to 9999, where Foundation's calendar and ISO 8601's proleptic
/// Gregorian one agree. Anything else (an earlier year, another shape, a value out of range) is left to Foundation,
/// as before. `TimestampTests` checks both directions against Foundation's style over the whole range.
extension Timestamp {
    /// 1583-01-01T00:00:00Z: the first whole year of the Gregorian calendar.
    static let directFrom: Int64 = -12_212_553_600_000

    /// `yyyy-MM-ddTHH:mm:ss.fffZ`, or nil before 1583.
    static func directISO8601(_ milliseconds: Int64) -> String? {
        guard milliseconds >= directFrom, milliseconds <= validMilliseconds.upperBound else { return nil }
        let (days, inDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        let (day, dayMilliseconds) = inDay >= 0 ? (days, inDay) : (days - 1, inDay + 86_400_000)
        let (year, month, dayOfMonth) = civil(fromDays: day)
        let seconds = dayMilliseconds / 1000
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func digits(_ value: Int64, _ count: Int) {
            var divisor: Int64 = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8((value / divisor) % 10))
                divisor /= 10
            }
        }
        digits(year, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(dayOfMonth, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(seconds / 3600, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(seconds / 60 % 60, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(seconds % 60, 2)
        bytes.append(UInt8(ascii: "."))
        digits(dayMilliseconds % 1000, 3)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Milliseconds of `yyyy-MM-ddTHH:mm:ss[.f…]Z` (the fraction cut to milliseconds, as the Foundation path cuts it)
    /// for the years 1583 to 9999 with every field in range; nil for anything else, which Foundation then reads.
    static func directMilliseconds(iso8601 text: String) -> Int64? {
        var text = text
        return text.withUTF8(directMilliseconds(bytes:))
    }

    private static func directMilliseconds(bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[bytes.count - 1] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ start: Int, _ count: Int) -> Int64? {
            var value: Int64 = 0
            for index in start..<(start + count) {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1583...9999).contains(year), (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction: Int64 = 0
        if bytes.count > 20 {
            // `.` and at least one digit, then the `Z`.
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21 else { return nil }
            for (place, index) in (20..<(bytes.count - 1)).enumerated() {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                if place < 3 { fraction = fraction * 10 + Int64(byte - UInt8(ascii: "0")) }
            }
            for _ in min(bytes.count - 21, 3)..<3 { fraction *= 10 }
        }
        let days = Self.days(fromCivil: year, month, day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + fraction
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant, `days_from_civil`).
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date of a day since 1970-01-01 (Hinnant, `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
