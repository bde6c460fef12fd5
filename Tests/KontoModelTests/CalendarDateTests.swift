import Foundation
import KontoModel
import Testing

@Suite("CalendarDate")
struct CalendarDateTests {
    @Test("Valid dates parse and print back", arguments: ["1815-12-10", "2000-02-29", "0001-01-01", "9999-12-31"])
    func valid(string: String) throws {
        let date = try #require(CalendarDate(string))
        #expect(date.description == string)
    }

    @Test("Malformed or impossible dates are refused", arguments: [
        "2001-02-29", "1900-02-29", "2020-13-01", "2020-04-31", "2020-1-01", "20-01-01", "2020-01-01T00:00:00Z", "", "2020-0a-01", "２０２０-01-01",
    ])
    func invalid(string: String) {
        #expect(CalendarDate(string) == nil)
    }

    @Test("Codable as a string and ordered by day")
    func codableAndOrdered() throws {
        let early = try #require(CalendarDate(year: 1990, month: 5, day: 17))
        let late = try #require(CalendarDate(year: 1990, month: 6, day: 1))
        #expect(early < late)
        let data = try JSONEncoder().encode(early)
        #expect(String(decoding: data, as: UTF8.self) == "\"1990-05-17\"")
        #expect(try JSONDecoder().decode(CalendarDate.self, from: data) == early)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(CalendarDate.self, from: Data("\"1990-02-30\"".utf8))
        }
    }
}
