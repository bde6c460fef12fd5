import Foundation
import KontoModel
import Testing

@Suite("AccountValue")
struct AccountValueTests {
    @Test("Every case survives a JSON round trip", arguments: [
        AccountValue.string("text"),
        .bool(true),
        .integer(-42),
        .double(2.5),
        .array([.string("a"), .integer(1)]),
        .object(["nested": .object(["x": .null])]),
        .null,
    ])
    func roundTrip(value: AccountValue) throws {
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(AccountValue.self, from: data) == value)
    }

    @Test("JSON cannot tell 1 from 1.0, so neither can equality")
    func integralDoubleEqualsInteger() {
        #expect(AccountValue.double(1) == .integer(1))
        #expect(AccountValue.integer(1) == .double(1))
        #expect(AccountValue.double(1.5) != .integer(1))
        #expect(AccountValue.bool(true) != .integer(1))
    }

    @Test("Typed values convert to and from their stored form")
    func typedConversion() throws {
        let name = PersonName(givenName: "Grace", familyName: "Hopper")
        let stored = try AccountValue(encoding: name)
        #expect(stored == .object(["givenName": .string("Grace"), "familyName": .string("Hopper")]))
        #expect(try stored.decode(as: PersonName.self) == name)
        #expect(try AccountValue(encoding: CalendarDate(year: 2000, month: 2, day: 29)) == .string("2000-02-29"))
        #expect(try AccountValue(encoding: GenderIdentity.nonBinary) == .string("nonBinary"))
    }

    @Test("A Date converts to an ISO 8601 string")
    func dateConversion() throws {
        let date = Date(timeIntervalSince1970: 0)
        let stored = try AccountValue(encoding: date)
        #expect(stored == .string("1970-01-01T00:00:00Z"))
        #expect(try stored.decode(as: Date.self) == date)
    }
}
