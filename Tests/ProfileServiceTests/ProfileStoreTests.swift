import KontoContracts
import KontoModel
import ProfileService
import Testing

@Suite("Profile store: create, load, modify, delete")
struct ProfileStoreTests {
    @Test("create stores the details at version 1; load returns them with the accountId", arguments: StorageKind.allCases)
    func createAndLoad(kind: StorageKind) async throws {
        try await kind.withStore { store in
            let created = try await store.create(accountId: "a1", details: Fixtures.details())
            #expect(created.version == 1)
            var expected = Fixtures.details()
            expected[identifier: "accountId"] = .string("a1")
            #expect(created.details == expected)

            let loaded = try await store.load(accountId: "a1")
            #expect(loaded == created)
            #expect(loaded.details[\.accountId] == "a1")
            #expect(loaded.details[\.name]?.familyName == "Lovelace")
        }
    }

    @Test("an accountId inside the details is accepted when it matches", arguments: StorageKind.allCases)
    func matchingAccountIdInDetails(kind: StorageKind) async throws {
        try await kind.withStore { store in
            var details = Fixtures.details()
            details[identifier: "accountId"] = .string("a1")
            let created = try await store.create(accountId: "a1", details: details)
            #expect(created.details == details)
        }
    }

    @Test("load with keys returns only those keys", arguments: StorageKind.allCases)
    func loadSelectedKeys(kind: StorageKind) async throws {
        try await kind.withStore { store in
            _ = try await store.create(accountId: "a1", details: Fixtures.details())
            let loaded = try await store.load(accountId: "a1", keys: ["email", "biography", "dateOfBirth"])
            #expect(loaded.details.identifiers == ["biography", "email"])
            #expect(loaded.version == 1)
            #expect(try await store.load(accountId: "a1", keys: []).details.isEmpty)
        }
    }

    @Test("loading an unknown account fails with account.notFound", arguments: StorageKind.allCases)
    func loadUnknown(kind: StorageKind) async throws {
        try await kind.withStore { store in
            for accountId in ["nobody", "", "nul\u{0}inside"] {
                let error = await #expect(throws: ServiceError.self) {
                    try await store.load(accountId: accountId)
                }
                #expect(error?.code == .notFound)
                #expect(error?.code.rawValue == "account.notFound")
                #expect(error?.isRetryable == false)
            }
        }
    }

    @Test("creating an account twice fails with profile.alreadyExists and keeps the first details", arguments: StorageKind.allCases)
    func createTwice(kind: StorageKind) async throws {
        try await kind.withStore { store in
            let first = try await store.create(accountId: "a1", details: Fixtures.details())
            let error = await #expect(throws: ServiceError.self) {
                try await store.create(accountId: "a1", details: Fixtures.details(userId: "grace@example.org"))
            }
            #expect(error?.code == .profileAlreadyExists)
            #expect(error?.code.rawValue == "profile.alreadyExists")
            #expect(try await store.load(accountId: "a1") == first)
        }
    }

    @Test("modify sets and removes in one step and advances the version by one", arguments: StorageKind.allCases)
    func modify(kind: StorageKind) async throws {
        try await kind.withStore { store in
            _ = try await store.create(accountId: "a1", details: Fixtures.details())
            let modified = try await store.modify(
                accountId: "a1",
                modifications: Fixtures.modifications(set: ["plan": .string("pro"), "phoneNumbers": .array([.string("+1 555 0100")])], remove: ["email"])
            )
            #expect(modified.version == 2)
            #expect(modified.details[identifier: "plan"] == .string("pro"))
            #expect(modified.details[identifier: "email"] == nil)
            #expect(try await store.load(accountId: "a1") == modified)
        }
    }

    @Test("modify with the current version succeeds; with a stale one it fails with account.versionConflict", arguments: StorageKind.allCases)
    func expectedVersion(kind: StorageKind) async throws {
        try await kind.withStore { store in
            _ = try await store.create(accountId: "a1", details: Fixtures.details())
            let second = try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["plan": .string("pro")]), expectedVersion: 1)
            #expect(second.version == 2)
            let error = await #expect(throws: ServiceError.self) {
                try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["plan": .string("free")]), expectedVersion: 1)
            }
            #expect(error?.code == .versionConflict)
            #expect(error?.code.rawValue == "account.versionConflict")
            #expect(error?.isRetryable == false)
            #expect(try await store.load(accountId: "a1") == second)
        }
    }

    @Test("a modification that changes nothing writes nothing and keeps the version", arguments: StorageKind.allCases)
    func noOpModification(kind: StorageKind) async throws {
        try await kind.withStore { store in
            let created = try await store.create(accountId: "a1", details: Fixtures.details())
            let same = try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["email": .string("ada@work.example")], remove: ["plan"]))
            #expect(same == created)
            #expect(try await store.load(accountId: "a1").version == 1)
        }
    }

    @Test("modifying an unknown account fails with account.notFound", arguments: StorageKind.allCases)
    func modifyUnknown(kind: StorageKind) async throws {
        try await kind.withStore { store in
            for expectedVersion: Int64? in [nil, 1] {
                let error = await #expect(throws: ServiceError.self) {
                    try await store.modify(accountId: "nobody", modifications: Fixtures.modifications(set: ["plan": .string("pro")]), expectedVersion: expectedVersion)
                }
                #expect(error?.code == .notFound)
            }
        }
    }

    @Test("delete is idempotent and the account is gone afterwards", arguments: StorageKind.allCases)
    func delete(kind: StorageKind) async throws {
        try await kind.withStore { store in
            _ = try await store.create(accountId: "a1", details: Fixtures.details())
            _ = try await store.create(accountId: "a2", details: Fixtures.details())
            #expect(try await store.delete(accountId: "a1"))
            #expect(try await store.delete(accountId: "a1") == false)
            #expect(try await store.delete(accountId: "") == false)
            await #expect(throws: ServiceError.self) {
                try await store.load(accountId: "a1")
            }
            #expect(try await store.load(accountId: "a2").version == 1)
        }
    }

    @Test("the store reports itself ready when its storage is", arguments: StorageKind.allCases)
    func readiness(kind: StorageKind) async throws {
        try await kind.withStore { store in
            try await store.checkHealth()
            #expect(await store.isReady())
        }
    }
}
