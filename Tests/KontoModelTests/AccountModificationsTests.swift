import Foundation
import KontoModel
import Testing

@Suite("AccountModifications")
struct AccountModificationsTests {
    private func current() -> AccountDetails {
        var details = Fixtures.details()
        details[\.biography] = "Mathematician"
        details[identifier: "memberSince"] = .string("2020-01-01")
        return details
    }

    private func modifications(set: (inout AccountDetails) -> Void = { _ in }, remove: Set<String> = []) -> AccountModifications {
        var values = AccountDetails()
        set(&values)
        return AccountModifications(set: values, remove: remove)
    }

    @Test("A valid modification sets and removes values")
    func appliesValidModification() throws {
        let change = modifications(set: { $0[\.biography] = "Poet"; $0[\.email] = "ada@work.example" }, remove: ["phoneNumbers"])
        let updated = try Fixtures.configuration().apply(change, to: current())
        #expect(updated[\.biography] == "Poet")
        #expect(updated[\.email] == "ada@work.example")
        #expect(updated[\.phoneNumbers] == nil)
        #expect(updated[\.accountId] == "acc-1")
        #expect(updated[\.dateOfBirth] == CalendarDate(year: 1815, month: 12, day: 10))
    }

    @Test("Encodes as {set, remove} and decodes back; either part may be absent")
    func codable() throws {
        let change = modifications(set: { $0[\.biography] = "Poet" }, remove: ["phoneNumbers", "email"])
        let data = try JSONEncoder().encode(change)
        let object = try Fixtures.jsonObject(data)
        #expect(object["remove"] as? [String] == ["email", "phoneNumbers"])
        #expect((object["set"] as? [String: String]) == ["biography": "Poet"])
        #expect(try JSONDecoder().decode(AccountModifications.self, from: data) == change)
        let onlyRemove = try JSONDecoder().decode(AccountModifications.self, from: Data(#"{"remove":["email"]}"#.utf8))
        #expect(onlyRemove.set.isEmpty && onlyRemove.remove == ["email"])
        #expect(try JSONDecoder().decode(AccountModifications.self, from: Data("{}".utf8)).isEmpty)
    }

    @Test("The password in `set` is encoded only when secrets are asked for")
    func secretsInSet() throws {
        let change = modifications(set: { $0[\.password] = "new-s3cret-value" })
        #expect(!String(decoding: try JSONEncoder().encode(change), as: UTF8.self).contains("new-s3cret-value"))
        let encoder = JSONEncoder()
        encoder.userInfo[.accountDetailsIncludeSecrets] = true
        #expect(String(decoding: try encoder.encode(change), as: UTF8.self).contains("new-s3cret-value"))
        #expect(!change.description.contains("new-s3cret-value"))
    }

    @Test("Changing the accountId is refused")
    func accountIdChanged() throws {
        let error = try #require(throws: AccountError.self) {
            try Fixtures.configuration().apply(modifications(set: { $0[\.accountId] = "acc-2" }), to: current())
        }
        #expect(error.code == .accountIdChanged)
        #expect(error.code.rawValue == "account.accountIdChanged")
        #expect(error.fields == [AccountFieldError(key: "accountId", code: .accountIdChanged, message: "The account identifier cannot be changed.")])
    }

    @Test("Removing the accountId is refused as a change")
    func accountIdRemoved() throws {
        let error = try #require(throws: AccountError.self) {
            try Fixtures.configuration().apply(modifications(remove: ["accountId"]), to: current())
        }
        #expect(error.code == .accountIdChanged)
    }

    @Test("Setting the accountId to its current value is no change")
    func accountIdUnchanged() throws {
        let updated = try Fixtures.configuration().apply(modifications(set: { $0[\.accountId] = "acc-1" }), to: current())
        #expect(updated == current())
    }

    @Test("Changing or removing a non-mutable key is refused")
    func nonMutableKeys() throws {
        let configuration = try Fixtures.configuration()
        let changed = try #require(throws: AccountError.self) {
            try configuration.apply(modifications(set: { $0[identifier: "memberSince"] = .string("2021-01-01") }), to: current())
        }
        #expect(changed.code == .mutatingNonMutableAccountKeys)
        #expect(changed.code.rawValue == "account.mutatingNonMutableAccountKeys")
        #expect(changed.fields == [AccountFieldError(key: "memberSince", code: .mutatingNonMutableAccountKey, message: "This value cannot be changed.")])

        let removed = try #require(throws: AccountError.self) {
            try configuration.apply(modifications(remove: ["memberSince"]), to: current())
        }
        #expect(removed.code == .mutatingNonMutableAccountKeys)

        // Resending the current value, as a form does, is not a change.
        _ = try configuration.apply(modifications(set: { $0[identifier: "memberSince"] = .string("2020-01-01") }), to: current())
    }

    @Test("Removing the userId is refused")
    func userIdNotRemovable() throws {
        let error = try #require(throws: AccountError.self) {
            try Fixtures.configuration().apply(modifications(remove: ["userId"]), to: current())
        }
        #expect(error.code == .userIdNotRemovable)
        #expect(error.fields == [AccountFieldError(key: "userId", code: .userIdNotRemovable, message: "The user identifier cannot be removed.")])
    }

    @Test("Removing a required key is refused as missingAccountValue")
    func missingAccountValue() throws {
        let error = try #require(throws: AccountError.self) {
            try Fixtures.configuration().apply(modifications(remove: ["biography", "phoneNumbers"]), to: current())
        }
        #expect(error.code == .missingAccountValue)
        #expect(error.fields == [AccountFieldError(key: "biography", code: .missingAccountValue, message: "This field is required.")])
    }

    @Test("Removing a key the schema does not know is refused when unknown keys are")
    func removingUnknownKey() throws {
        let error = try #require(throws: AccountError.self) {
            try Fixtures.configuration().apply(modifications(remove: ["shoeColour"]), to: current())
        }
        #expect(error.code == .validationFailed)
        #expect(error.fields == [AccountFieldError(key: "shoeColour", code: .unknownKey, message: "Unknown account key.")])
    }

    @Test("Setting and removing the same key is refused")
    func conflictingModification() throws {
        let error = try #require(throws: AccountError.self) {
            try Fixtures.configuration().apply(modifications(set: { $0[\.email] = "a@b.c" }, remove: ["email"]), to: current())
        }
        #expect(error.code == .validationFailed)
        #expect(error.fields.map(\.code) == [.conflictingModification])
    }

    @Test("Set values are checked for types, rules and unknown keys")
    func invalidValues() throws {
        let change = modifications(set: {
            $0[\.biography] = " "
            $0[identifier: "plan"] = .string("platinum")
            $0[identifier: "shoeColour"] = .string("red")
        })
        let error = try #require(throws: AccountError.self) { try Fixtures.configuration().apply(change, to: current()) }
        #expect(error.code == .validationFailed)
        #expect(error.fields.map(\.key) == ["biography", "plan", "shoeColour"])
        #expect(error.fields.map(\.code) == [.rule("nonEmpty"), .invalidType, .unknownKey])
    }

    @Test("Atomic: one bad part refuses the whole modification and every problem is listed")
    func atomicAndComplete() throws {
        let change = modifications(
            set: { $0[\.accountId] = "acc-2"; $0[\.biography] = "Poet"; $0[identifier: "memberSince"] = .string("1999-01-01"); $0[\.email] = "bad" },
            remove: ["userId", "name"]
        )
        let error = try #require(throws: AccountError.self) { try Fixtures.configuration().apply(change, to: current()) }
        #expect(error.code == .accountIdChanged)
        #expect(Set(error.fields.map(\.code)) == [
            .accountIdChanged, .mutatingNonMutableAccountKey, .userIdNotRemovable, .missingAccountValue, .rule("minimalEmail"),
        ])
        #expect(error.fields.count == 5)
    }

    @Test("The result keeps the current userId type for fallbacks")
    func keepsUserIdType() throws {
        var details = current()
        details.userIdType = .username
        let updated = try Fixtures.configuration().apply(modifications(set: { $0[\.biography] = "Poet" }), to: details)
        #expect(updated.userIdType == .username)
        #expect(updated[\.email] == nil)
    }
}
