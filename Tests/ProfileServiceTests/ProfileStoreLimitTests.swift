import KontoContracts
import KontoModel
import ProfileService
import Testing

@Suite("Profile store: size limits")
struct ProfileStoreLimitTests {
    /// A string whose JSON encoding (with its two quotes) is exactly `bytes` long.
    static func string(encodedBytes bytes: Int) -> AccountValue {
        .string(String(repeating: "x", count: bytes - 2))
    }

    @Test("the defaults are 64 KiB per value and 1 MiB per account")
    func defaults() {
        #expect(ProfileLimits().maximumValueBytes == 65_536)
        #expect(ProfileLimits().maximumAccountBytes == 1_048_576)
        #expect(ProfileStoreOptions().operationTimeout <= .seconds(3))
    }

    @Test("a value at the limit is stored; one byte over is refused with profile.valueTooLarge naming key and limit", arguments: StorageKind.allCases)
    func valueLimit(kind: StorageKind) async throws {
        try await kind.withStore { store in
            var details = Fixtures.details()
            details[identifier: "biography"] = Self.string(encodedBytes: 65_536)
            _ = try await store.create(accountId: "a1", details: details)

            details[identifier: "biography"] = Self.string(encodedBytes: 65_537)
            let atCreate = await #expect(throws: ServiceError.self) {
                try await store.create(accountId: "a2", details: details)
            }
            #expect(atCreate?.code == .profileValueTooLarge)
            #expect(atCreate?.code.rawValue == "profile.valueTooLarge")
            #expect(atCreate?.fields == [AccountFieldError(key: "biography", code: .valueTooLarge, message: "This value is larger than the limit of 65536 bytes.")])
            #expect(atCreate?.message.contains("biography") == true)

            let atModify = await #expect(throws: ServiceError.self) {
                try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["phoneNumbers": .array([Self.string(encodedBytes: 65_535)])]))
            }
            #expect(atModify?.code == .profileValueTooLarge)
            #expect(atModify?.fields.map(\.key) == ["phoneNumbers"])
            #expect(try await store.load(accountId: "a1").version == 1)
        }
    }

    @Test("an account over the limit is refused with profile.accountTooLarge, at create and by a modification", arguments: StorageKind.allCases)
    func accountLimit(kind: StorageKind) async throws {
        let limits = ProfileLimits(maximumValueBytes: 1_000, maximumAccountBytes: 2_000)
        // As long as an address mail can reach may be (EmailAddressSyntax: 64 before the @, labels of 63).
        let longEmail = String(repeating: "e", count: 64) + "@" + String(repeating: "d", count: 63) + "." + String(repeating: "d", count: 63) + "." + String(repeating: "d", count: 55) + ".org"
        try await kind.withStore(options: ProfileStoreOptions(limits: limits, operationTimeout: .seconds(20))) { store in
            var details = Fixtures.details()
            details[identifier: "biography"] = Self.string(encodedBytes: 900)
            details[identifier: "phoneNumbers"] = .array([Self.string(encodedBytes: 400), Self.string(encodedBytes: 400)])
            _ = try await store.create(accountId: "a1", details: details)

            let modify = await #expect(throws: ServiceError.self) {
                try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["email": .string(longEmail), "biography": Self.string(encodedBytes: 990)]))
            }
            #expect(modify?.code == .profileAccountTooLarge)
            #expect(modify?.code.rawValue == "profile.accountTooLarge")
            #expect(modify?.message.contains("2000 bytes") == true)
            #expect(modify?.isRetryable == false)

            details[identifier: "email"] = .string(longEmail)
            details[identifier: "biography"] = Self.string(encodedBytes: 990)
            let create = await #expect(throws: ServiceError.self) {
                try await store.create(accountId: "a2", details: details)
            }
            #expect(create?.code == .profileAccountTooLarge)
            #expect(try await store.load(accountId: "a1").version == 1)
            // Shrinking is always possible.
            #expect(try await store.modify(accountId: "a1", modifications: Fixtures.modifications(remove: ["phoneNumbers"])).version == 2)
        }
    }

    @Test("a number JSON cannot carry is refused as invalid")
    func nonFiniteNumber() async throws {
        try await StorageKind.inMemory.withStore(configuration: .keepingUnknownKeys) { store in
            var details = Fixtures.details()
            details[identifier: "ratio"] = .double(.infinity)
            let error = await #expect(throws: ServiceError.self) {
                try await store.create(accountId: "a1", details: details)
            }
            #expect(error?.code == .validationFailed)
            #expect(error?.fields.map(\.key) == ["ratio"])
        }
    }
}
