import Foundation
import KontoModel
import Testing

/// Fresh values per call, so no test shares state with another.
enum Fixtures {
    static func details() -> AccountDetails {
        var details = AccountDetails()
        details[\.accountId] = "acc-1"
        details[\.userId] = "ada@example.org"
        details[\.name] = PersonName(givenName: "Ada", familyName: "Lovelace")
        details[\.dateOfBirth] = CalendarDate(year: 1815, month: 12, day: 10)
        details[\.genderIdentity] = .female
        details[\.phoneNumbers] = ["+44 20 7946 0000"]
        return details
    }

    static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    static func jsonObject(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
