import KontoContracts
import KontoModel
import ProfileService
import Testing

@Suite("Profile store: concurrent modifications")
struct ProfileStoreConcurrencyTests {
    @Test("50 concurrent modifies, each setting its own key, all land and advance the version by exactly 50", arguments: StorageKind.allCases)
    func noLostUpdates(kind: StorageKind) async throws {
        try await kind.withStore(configuration: .keepingUnknownKeys) { store in
            _ = try await store.create(accountId: "a1", details: Fixtures.details())
            let versions = try await withThrowingTaskGroup(of: Int64.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        let modifications = Fixtures.modifications(set: ["tag\(index)": .integer(Int64(index))])
                        return try await store.modify(accountId: "a1", modifications: modifications).version
                    }
                }
                return try await group.reduce(into: [Int64]()) { $0.append($1) }
            }
            // Every modify got its own version: none overwrote another's write.
            #expect(versions.sorted() == Array(Int64(2)...Int64(51)))
            let loaded = try await store.load(accountId: "a1")
            #expect(loaded.version == 51)
            for index in 0..<50 {
                #expect(loaded.details[identifier: "tag\(index)"] == .integer(Int64(index)))
            }
            #expect(loaded.details[identifier: "biography"] == Fixtures.details()[identifier: "biography"])
        }
    }

    @Test("of two modifies racing with the same expected version exactly one wins; the other gets account.versionConflict", arguments: StorageKind.allCases)
    func racingExpectedVersions(kind: StorageKind) async throws {
        try await kind.withStore { store in
            _ = try await store.create(accountId: "a1", details: Fixtures.details())
            let outcomes = await withTaskGroup(of: Result<Int64, ServiceError>.self) { group in
                for plan in ["free", "pro"] {
                    group.addTask {
                        do throws(ServiceError) {
                            let modifications = Fixtures.modifications(set: ["plan": .string(plan)])
                            return .success(try await store.modify(accountId: "a1", modifications: modifications, expectedVersion: 1).version)
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: [Result<Int64, ServiceError>]()) { $0.append($1) }
            }
            let successes = outcomes.compactMap { try? $0.get() }
            let failures = outcomes.compactMap { outcome -> ServiceError? in
                if case let .failure(error) = outcome { return error }
                return nil
            }
            #expect(successes == [2])
            #expect(failures.map(\.code.rawValue) == ["account.versionConflict"])
            #expect(failures.first?.isRetryable == false)
            #expect(try await store.load(accountId: "a1").version == 2)
        }
    }

    @Test("a modify that loses a race re-reads and keeps the other writer's change; with an expected version it reports the conflict")
    func lostRaceIsRetried() async throws {
        let configuration = try AccountConfigurationChoice.standard.make()
        let storage = InterleavingStorage(otherWriter: ["plan": .string("free")])
        let store = ProfileStore(storage: storage, configuration: configuration, options: Fixtures.options, logger: Fixtures.logger)
        _ = try await store.create(accountId: "a1", details: Fixtures.details())
        let modified = try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["email": .string("ada@home.example")]))
        #expect(modified.version == 3)
        #expect(modified.details[identifier: "plan"] == .string("free"))
        #expect(modified.details[identifier: "email"] == .string("ada@home.example"))
        #expect(try await store.load(accountId: "a1") == modified)

        let strict = ProfileStore(storage: InterleavingStorage(otherWriter: ["plan": .string("free")]), configuration: configuration, options: Fixtures.options, logger: Fixtures.logger)
        _ = try await strict.create(accountId: "a1", details: Fixtures.details())
        let error = await #expect(throws: ServiceError.self) {
            try await strict.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["email": .string("ada@home.example")]), expectedVersion: 1)
        }
        #expect(error?.code.rawValue == "account.versionConflict")
        let after = try await strict.load(accountId: "a1")
        #expect(after.version == 2)
        #expect(after.details[identifier: "email"] == .string("ada@work.example"))
    }

    @Test("a modify that keeps losing the race gives up after the configured attempts with a retryable conflict")
    func boundedRetries() async throws {
        let storage = LosingRaceStorage()
        let store = ProfileStore(
            storage: storage,
            configuration: try AccountConfigurationChoice.standard.make(),
            options: ProfileStoreOptions(operationTimeout: .seconds(20), maximumModifyAttempts: 5),
            logger: Fixtures.logger
        )
        _ = try await store.create(accountId: "a1", details: Fixtures.details())
        let error = await #expect(throws: ServiceError.self) {
            try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["plan": .string("pro")]))
        }
        #expect(error?.code == .versionConflict)
        #expect(error?.isRetryable == true)
        #expect(storage.replaceAttempts == 5)
    }
}
