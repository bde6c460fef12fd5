import Foundation
import KontoModel
import Testing

@Suite("AccountError")
struct AccountErrorTests {
    @Test("Codes are stable strings", arguments: [
        (AccountError.Code.credentialsTaken, "account.credentialsTaken"),
        (.wrongCredentials, "account.wrongCredentials"),
        (.validationFailed, "account.validationFailed"),
        (.accountIdChanged, "account.accountIdChanged"),
        (.mutatingNonMutableAccountKeys, "account.mutatingNonMutableAccountKeys"),
        (.missingAccountValue, "account.missingAccountValue"),
        (.reauthenticationRequired, "account.reauthenticationRequired"),
        (.userIdNotRemovable, "account.userIdNotRemovable"),
        (.notFound, "account.notFound"),
    ])
    func stableCodes(code: AccountError.Code, raw: String) {
        #expect(code.rawValue == raw)
        #expect(AccountError(code: code).description.hasPrefix(raw + ": "))
    }

    @Test("Round trips through JSON with its field errors")
    func codable() throws {
        let error = AccountError(code: .validationFailed, fields: [
            AccountFieldError(key: "email", code: .rule("minimalEmail"), message: "The provided email is invalid."),
        ])
        let data = try JSONEncoder().encode(error)
        let object = try Fixtures.jsonObject(data)
        #expect(object["code"] as? String == "account.validationFailed")
        #expect((object["fields"] as? [[String: String]])?.first?["code"] == "rule.minimalEmail")
        #expect(try JSONDecoder().decode(AccountError.self, from: data) == error)
    }

    @Test("A failed password check never puts the password into the error")
    func noSecretsInDescription() throws {
        var details = AccountDetails()
        details[\.userId] = "ada@example.org"
        details[\.password] = "tiny"
        details[\.name] = PersonName(givenName: "Ada")
        let error = try #require(throws: AccountError.self) {
            try AccountConfiguration.default.validate(details)
        }
        #expect(error.fields.map(\.key) == ["password"])
        #expect(!error.description.contains("tiny"))
        #expect(!String(decoding: try JSONEncoder().encode(error), as: UTF8.self).contains("tiny"))
        #expect(!String(describing: error).contains("tiny"))
    }
}
