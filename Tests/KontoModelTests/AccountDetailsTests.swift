import Foundation
import KontoModel
import Testing

@Suite("AccountDetails")
struct AccountDetailsTests {
    @Test("Encodes as one flat JSON object and decodes back unchanged")
    func jsonRoundTrip() throws {
        var details = Fixtures.details()
        details[\.email] = "ada@work.example"
        details[\.biography] = "Wrote the first program."
        let data = try JSONEncoder().encode(details)
        let object = try Fixtures.jsonObject(data)
        #expect(object["accountId"] as? String == "acc-1")
        #expect(object["dateOfBirth"] as? String == "1815-12-10")
        #expect(object["genderIdentity"] as? String == "female")
        #expect(object["biography"] as? String == "Wrote the first program.")
        #expect((object["name"] as? [String: String]) == ["givenName": "Ada", "familyName": "Lovelace"])
        #expect(object["phoneNumbers"] as? [String] == ["+44 20 7946 0000"])
        #expect(Set(object.keys) == ["accountId", "userId", "name", "dateOfBirth", "genderIdentity", "phoneNumbers", "email", "biography"])

        let decoded = try JSONDecoder().decode(AccountDetails.self, from: data)
        #expect(decoded == details)
        #expect(decoded[\.dateOfBirth] == CalendarDate(year: 1815, month: 12, day: 10))
        #expect(decoded[\.name]?.givenName == "Ada")
    }

    @Test("A custom key declared in the app is read and written by key path")
    func customKeyByKeyPath() {
        var details = AccountDetails()
        #expect(details[\.biography] == nil)
        details[\.biography] = "Swift on the server"
        #expect(details[\.biography] == "Swift on the server")
        #expect(details[BiographyKey.self] == "Swift on the server")
        #expect(details[identifier: "biography"] == .string("Swift on the server"))
        details[\.shoeSize] = 42.5
        #expect(details[\.shoeSize] == 42.5)
        details[\.pronouns] = .theyThem
        #expect(details[\.pronouns] == .theyThem)
        #expect(details[identifier: "pronouns"] == .string("theyThem"))
        #expect(PronounsKey.valueType == .enumeration(cases: ["sheHer", "heHim", "theyThem"]))
        #expect(PronounsKey.initialValue == .none)
        details[\.pronouns] = nil
        details[\.biography] = nil
        #expect(!details.contains(\.biography))
        #expect(details.identifiers == ["shoeSize"])
    }

    @Test("A typed read of a value of another type yields nil, and the throwing read explains")
    func mismatchedStoredValue() {
        let details = AccountDetails(values: ["biography": .integer(3)])
        #expect(details[\.biography] == nil)
        #expect(throws: DecodingError.self) {
            try details.value(of: BiographyKey.self)
        }
    }

    @Test("userId falls back to accountId when absent")
    func userIdFallback() {
        var details = AccountDetails()
        details[\.accountId] = "acc-7"
        #expect(details[\.userId] == "acc-7")
        #expect(details.userId == "acc-7")
        #expect(!details.contains(\.userId))
        details[\.userId] = "grace"
        #expect(details[\.userId] == "grace")
    }

    @Test("email falls back to userId only when the userId is an email address")
    func emailFallback() {
        var details = AccountDetails(userIdType: .emailAddress)
        details[\.userId] = "ada@example.org"
        #expect(details[\.email] == "ada@example.org")
        #expect(details.email == "ada@example.org")

        details.userIdType = .username
        #expect(details[\.email] == nil)

        details[\.email] = "contact@example.org"
        #expect(details[\.email] == "contact@example.org")
        details.userIdType = .emailAddress
        #expect(details[\.email] == "contact@example.org")
    }

    @Test("Fallback values are not encoded")
    func fallbacksAreNotStored() throws {
        var details = AccountDetails()
        details[\.accountId] = "acc-7"
        let object = try Fixtures.jsonObject(try details.encoded())
        #expect(Set(object.keys) == ["accountId"])
    }

    @Test("The password never appears in the default encoding, description, debug output or mirror")
    func passwordIsSecret() throws {
        var details = Fixtures.details()
        details[\.password] = "correct horse battery staple"
        #expect(details[\.password] == "correct horse battery staple")

        let secret = "correct horse battery staple"
        let encodings = [try JSONEncoder().encode(details), try details.encoded()]
        for data in encodings {
            #expect(!String(decoding: data, as: UTF8.self).contains(secret))
            #expect(try Fixtures.jsonObject(data)["password"] == nil)
        }
        var dumped = ""
        dump(details, to: &dumped)
        for text in [details.description, details.debugDescription, String(reflecting: details), "\(details)", dumped] {
            #expect(!text.contains(secret))
        }
        #expect(details.description.contains("password: <redacted>"))
        #expect(details.publicValues["password"] == nil)
    }

    @Test("Secrets are encoded only when asked for, for transfers between services")
    func secretsOnRequest() throws {
        var details = AccountDetails()
        details[\.userId] = "ada@example.org"
        details[\.password] = "s3cret-value"
        let object = try Fixtures.jsonObject(try details.encoded(includingSecrets: true))
        #expect(object["password"] as? String == "s3cret-value")

        struct Envelope: Encodable {
            let details: AccountDetails
        }
        let encoder = JSONEncoder()
        encoder.userInfo[.accountDetailsIncludeSecrets] = true
        #expect(String(decoding: try encoder.encode(Envelope(details: details)), as: UTF8.self).contains("s3cret-value"))
        #expect(!String(decoding: try JSONEncoder().encode(Envelope(details: details)), as: UTF8.self).contains("s3cret-value"))
    }

    @Test("Filtering and merging keep secrets secret")
    func filterAndMerge() throws {
        var details = Fixtures.details()
        var credentials = AccountDetails()
        credentials[\.password] = "another-secret"
        details.merge(credentials)
        #expect(details.isSecret("password"))
        let credentialsOnly = details.filter { $0 == "password" || $0 == "userId" }
        #expect(credentialsOnly.identifiers == ["password", "userId"])
        #expect(!String(decoding: try credentialsOnly.encoded(), as: UTF8.self).contains("another-secret"))
    }

    @Test("The built-in keys have the seeds' metadata")
    func builtInDescriptors() {
        #expect(AccountKeySchema.builtInDescriptors.map(\.identifier) == [
            "accountId", "userId", "password", "name", "dateOfBirth", "genderIdentity", "email", "phoneNumbers",
        ])
        #expect(GenderIdentityKey.valueType == .enumeration(cases: ["female", "male", "transgender", "nonBinary", "preferNotToState"]))
        #expect(DateOfBirthKey.valueType == .date)
        #expect(NameKey.category == .name)
        #expect(PhoneNumbersKey.valueType == .stringList)
        #expect(!AccountIdKey.options.contains(.mutable))
        #expect(PasswordKey.isSecret && !PasswordKey.options.contains(.display))
        #expect(EmailKey.descriptor.rules == [.minimalEmail])
        #expect(BiographyKey.descriptor.initialValue == .string(""))
        #expect(DateOfBirthKey.descriptor.initialValue == nil)
        #expect(GenderIdentityKey.initialValue == .default(.preferNotToState))
    }
}
