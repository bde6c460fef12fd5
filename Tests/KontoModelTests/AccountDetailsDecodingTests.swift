import Foundation
import KontoModel
import Testing

@Suite("AccountDetails decoding against a schema")
struct AccountDetailsDecodingTests {
    private func schema() throws -> AccountKeySchema {
        try AccountKeySchema(customKeys: [
            BiographyKey.descriptor,
            AccountKeyDescriptor(identifier: "age", name: "Age", category: .personalDetails, valueType: .integer),
            AccountKeyDescriptor(identifier: "newsletter", name: "Newsletter", category: .other, valueType: .bool),
            AccountKeyDescriptor(identifier: "height", name: "Height", category: .personalDetails, valueType: .double),
        ])
    }

    @Test("Valid values decode, typed access works on the result")
    func validValues() throws {
        let json = try Fixtures.json([
            "userId": "ada@example.org", "name": ["givenName": "Ada"], "dateOfBirth": "1815-12-10", "genderIdentity": "female",
            "phoneNumbers": ["1", "2"], "biography": "Hi", "age": 36, "newsletter": true, "height": 1.65,
        ])
        let details = try AccountDetails.decode(json: json, schema: try schema())
        #expect(details[\.genderIdentity] == .female)
        #expect(details[\.phoneNumbers] == ["1", "2"])
        #expect(details[identifier: "age"] == .integer(36))
        #expect(details[identifier: "height"] == .double(1.65))
    }

    @Test("An integer is a valid double")
    func integerIsDouble() throws {
        let details = try AccountDetails.decode(json: try Fixtures.json(["height": 2]), schema: try schema())
        #expect(details[identifier: "height"] == .integer(2))
    }

    @Test("Every bad value is reported by its key, not just the first")
    func reportsAllBadValues() throws {
        let json = try Fixtures.json([
            "userId": 12,
            "dateOfBirth": "1815-13-10",
            "genderIdentity": "robot",
            "phoneNumbers": ["1", 2],
            "name": ["givenName": "Ada", "title": "Countess"],
            "age": 36.5,
            "newsletter": "yes",
            "height": "tall",
            "biography": NSNull(),
            "favouriteColour": "blue",
        ])
        let error = try #require(throws: AccountError.self) {
            try AccountDetails.decode(json: json, schema: try schema())
        }
        #expect(error.code == .validationFailed)
        #expect(error.code.rawValue == "account.validationFailed")
        #expect(error.fields.map(\.key) == [
            "age", "biography", "dateOfBirth", "favouriteColour", "genderIdentity", "height", "name", "newsletter", "phoneNumbers", "userId",
        ])
        let byKey = Dictionary(uniqueKeysWithValues: error.fields.map { ($0.key, $0) })
        #expect(byKey["favouriteColour"]?.code == .unknownKey)
        #expect(error.fields.filter { $0.code == .invalidType }.count == 9)
        #expect(byKey["genderIdentity"]?.message == "Invalid value: expected one of female, male, transgender, nonBinary, preferNotToState.")
        #expect(byKey["dateOfBirth"]?.message == "Invalid value: expected a calendar date \"yyyy-MM-dd\".")
        #expect(byKey["age"]?.message == "Invalid value: expected an integer, got double.")
        #expect(byKey["userId"]?.message == "Invalid value: expected a string, got integer.")
        #expect(byKey["biography"]?.message == "Invalid value: expected a string, got null.")
        #expect(byKey["phoneNumbers"]?.message == "Invalid value: expected a list of strings.")
    }

    @Test("Unknown keys are kept when the configuration says so")
    func keepsUnknownKeys() throws {
        let json = try Fixtures.json(["favouriteColour": "blue", "userId": "ada@example.org"])
        let details = try AccountDetails.decode(json: json, schema: try schema(), unknownKeys: .keep)
        #expect(details[identifier: "favouriteColour"] == .string("blue"))
        let kept = try AccountDetails.decode(json: try details.encoded(), schema: try schema(), unknownKeys: .keep)
        #expect(kept == details)
    }

    @Test("Something other than a JSON object is refused", arguments: ["[1, 2]", "\"text\"", "{", ""])
    func notAnObject(json: String) throws {
        let error = try #require(throws: AccountError.self) {
            try AccountDetails.decode(json: Data(json.utf8), schema: .builtIn)
        }
        #expect(error.code == .validationFailed)
        #expect(error.message == "Account details must be a JSON object.")
    }

    @Test("A decoded password is marked secret and stays out of the default encoding")
    func decodedPasswordIsSecret() throws {
        let json = try Fixtures.json(["userId": "ada@example.org", "password": "hunter2hunter2"])
        let details = try AccountDetails.decode(json: json, schema: .builtIn)
        #expect(details[\.password] == "hunter2hunter2")
        #expect(!String(decoding: try JSONEncoder().encode(details), as: UTF8.self).contains("hunter2"))
    }
}
