import KontoContracts
import KontoModel
import ProfileService
import Testing

/// Schema enforcement: every refusal lists every field, and nothing is written.
@Suite("Profile store: schema enforcement")
struct ProfileStoreValidationTests {
    private func refusal(
        _ kind: StorageKind = .inMemory,
        configuration: AccountConfigurationChoice = .standard,
        _ operation: @escaping @Sendable (ProfileStore) async throws -> Void
    ) async throws -> ServiceError? {
        try await kind.withStore(configuration: configuration) { store in
            _ = try await store.create(accountId: "existing", details: Fixtures.details())
            let error = await #expect(throws: ServiceError.self) {
                try await operation(store)
            }
            // A refused create leaves no account; a refused modify leaves the account as it was.
            await #expect(throws: ServiceError.self) { try await store.load(accountId: "new") }
            #expect(try await store.load(accountId: "existing").version == 1)
            return error
        }
    }

    @Test("wrong types, failing rules and unknown keys are reported per key with the rule's message", arguments: StorageKind.allCases)
    func createReportsEveryField(kind: StorageKind) async throws {
        let error = try await refusal(kind) { store in
            var details = Fixtures.details()
            details[identifier: "biography"] = .string("SHOUTING")
            details[identifier: "email"] = .string("nobody")
            details[identifier: "plan"] = .string("enterprise")
            details[identifier: "dateOfBirth"] = .integer(1815)
            details[identifier: "favouriteColour"] = .string("blue")
            _ = try await store.create(accountId: "new", details: details)
        }
        #expect(error?.code == .validationFailed)
        #expect(error?.fields.map(\.key) == ["biography", "dateOfBirth", "email", "favouriteColour", "plan"])
        #expect(error?.fields.first == AccountFieldError(key: "biography", code: .rule("noShouting"), message: "Please do not use capital letters."))
        #expect(Fixtures.codes(error) == ["rule.noShouting", "invalidType", "rule.minimalEmail", "unknownKey", "invalidType"])
        #expect(error?.description.contains("SHOUTING") == false)
    }

    @Test("a required key missing at create is reported; credentials are Identity's to require")
    func missingRequiredKey() async throws {
        let error = try await refusal { store in
            var details = Fixtures.details()
            details[identifier: "biography"] = nil
            details[identifier: "userId"] = nil
            _ = try await store.create(accountId: "new", details: details)
        }
        #expect(error?.code == AccountError.Code.missingAccountValue)
        #expect(error?.fields == [AccountFieldError(key: "biography", code: .missingAccountValue, message: "This field is required.")])
    }

    @Test("a password is refused at create and in modifications, never stored", arguments: StorageKind.allCases)
    func credentialsRefused(kind: StorageKind) async throws {
        let atCreate = try await refusal(kind) { store in
            var details = Fixtures.details()
            details[\.password] = "correct horse battery"
            _ = try await store.create(accountId: "new", details: details)
        }
        #expect(atCreate?.code == .validationFailed)
        #expect(atCreate?.fields == [AccountFieldError(key: "password", code: .credentialNotAccepted, message: "Credentials are not stored with the profile.")])
        #expect(atCreate?.description.contains("correct horse") == false)

        let atModify = try await refusal(kind) { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(set: ["password": .string("correct horse battery")]))
        }
        #expect(Fixtures.codes(atModify) == ["credentialNotAccepted"])

        let atRemove = try await refusal(kind) { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(remove: ["password"]))
        }
        #expect(Fixtures.codes(atRemove) == ["credentialNotAccepted"])
    }

    @Test("under exactly, a declared key outside the supported set is refused")
    func unsupportedKeyUnderExactly() async throws {
        let error = try await refusal(configuration: .exactly) { store in
            var details = Fixtures.details()
            details[identifier: "plan"] = .string("pro")
            _ = try await store.create(accountId: "new", details: details)
        }
        #expect(error?.code == .validationFailed)
        #expect(error?.fields == [AccountFieldError(key: "plan", code: .unsupportedKey, message: "This account key is not supported here.")])

        let inModify = try await refusal(configuration: .exactly) { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(set: ["phoneNumbers": .array([])]))
        }
        #expect(Fixtures.codes(inModify) == ["unsupportedKey"])
    }

    @Test("unknown keys are refused when the policy rejects them and stored when it keeps them", arguments: StorageKind.allCases)
    func unknownKeys(kind: StorageKind) async throws {
        let error = try await refusal(kind) { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(set: ["favouriteColour": .string("blue")]))
        }
        #expect(error?.fields == [AccountFieldError(key: "favouriteColour", code: .unknownKey, message: "Unknown account key.")])

        try await kind.withStore(configuration: .keepingUnknownKeys) { store in
            var details = Fixtures.details()
            details[identifier: "favouriteColour"] = .object(["name": .string("blue"), "hex": .string("#0000ff")])
            _ = try await store.create(accountId: "a1", details: details)
            #expect(try await store.load(accountId: "a1").details[identifier: "favouriteColour"] == details[identifier: "favouriteColour"])
        }
    }

    @Test("removing a required key is refused with account.missingAccountValue")
    func removeRequiredKey() async throws {
        let error = try await refusal { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(remove: ["biography", "email"]))
        }
        #expect(error?.code == AccountError.Code.missingAccountValue)
        #expect(error?.fields == [AccountFieldError(key: "biography", code: .missingAccountValue, message: "This field is required.")])
    }

    @Test("removing the userId is refused")
    func removeUserId() async throws {
        let error = try await refusal { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(remove: ["userId"]))
        }
        #expect(error?.code == AccountError.Code.userIdNotRemovable)
    }

    @Test("changing the accountId is refused, in a modification and at create", arguments: StorageKind.allCases)
    func accountIdImmutable(kind: StorageKind) async throws {
        let inModify = try await refusal(kind) { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(set: ["accountId": .string("other")]))
        }
        #expect(inModify?.code == AccountError.Code.accountIdChanged)
        #expect(Fixtures.codes(inModify) == ["accountIdChanged"])

        let removed = try await refusal(kind) { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(remove: ["accountId"]))
        }
        #expect(removed?.code == AccountError.Code.accountIdChanged)

        let atCreate = try await refusal(kind) { store in
            var details = Fixtures.details()
            details[identifier: "accountId"] = .string("other")
            _ = try await store.create(accountId: "new", details: details)
        }
        #expect(atCreate?.code == AccountError.Code.accountIdChanged)
    }

    @Test("a non-mutable key cannot change once set; sending its current value again is fine")
    func nonMutableKey() async throws {
        try await StorageKind.inMemory.withStore { store in
            var details = Fixtures.details()
            details[identifier: "memberSince"] = .string("2024-01-31")
            _ = try await store.create(accountId: "a1", details: details)
            let error = await #expect(throws: ServiceError.self) {
                try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["memberSince": .string("2020-01-01")]))
            }
            #expect(error?.code == AccountError.Code.mutatingNonMutableAccountKeys)
            #expect(error?.fields.map(\.key) == ["memberSince"])
            let same = try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["memberSince": .string("2024-01-31")]))
            #expect(same.version == 1)
        }
    }

    @Test("modification problems are all listed together")
    func modificationListsEverything() async throws {
        let error = try await refusal { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(
                set: ["password": .string("hunter22hunter"), "plan": .bool(true), "email": .string("x")],
                remove: ["name"]
            ))
        }
        #expect(error?.fields.map(\.key) == ["email", "name", "password", "plan"])
        #expect(Fixtures.codes(error) == ["rule.minimalEmail", "missingAccountValue", "credentialNotAccepted", "invalidType"])
    }

    @Test("NUL characters and an empty accountId are refused, identically for every storage", arguments: StorageKind.allCases)
    func unstorableText(kind: StorageKind) async throws {
        let nul = try await refusal(kind) { store in
            var details = Fixtures.details()
            details[identifier: "biography"] = .string("before\u{0}after")
            _ = try await store.create(accountId: "new", details: details)
        }
        #expect(nul?.fields == [AccountFieldError(key: "biography", code: .unsupportedCharacter, message: "Text must not contain NUL characters.")])

        let nested = try await refusal(kind) { store in
            _ = try await store.modify(accountId: "existing", modifications: Fixtures.modifications(set: ["phoneNumbers": .array([.string("1\u{0}")])]))
        }
        #expect(Fixtures.codes(nested) == ["unsupportedCharacter"])

        try await kind.withStore { store in
            for accountId in ["", "a\u{0}b"] {
                let error = await #expect(throws: ServiceError.self) {
                    try await store.create(accountId: accountId, details: Fixtures.details())
                }
                #expect(error?.code == .validationFailed)
                #expect(error?.fields.map(\.key) == ["accountId"])
            }
        }
    }
}
