import KontoContracts
import KontoModel
import ProfileService
import Testing

@Suite("Profile store: storage failures")
struct ProfileStoreFailureTests {
    private func store(_ behaviour: FailingStorage.Behaviour, timeout: Duration = .seconds(20)) throws -> ProfileStore {
        ProfileStore(
            storage: FailingStorage(behaviour: behaviour),
            configuration: try AccountConfigurationChoice.standard.make(),
            options: ProfileStoreOptions(operationTimeout: timeout),
            logger: Fixtures.logger
        )
    }

    /// Every public call, so none is left unmapped.
    private static func everyCall(_ store: ProfileStore) -> [@Sendable () async throws -> Void] {
        [
            { _ = try await store.create(accountId: "a1", details: Fixtures.details()) },
            { _ = try await store.load(accountId: "a1") },
            { _ = try await store.modify(accountId: "a1", modifications: Fixtures.modifications(set: ["plan": .string("pro")])) },
            { _ = try await store.delete(accountId: "a1") },
            { try await store.checkHealth() },
        ]
    }

    @Test("an unavailable storage gives a retryable profile.storageUnavailable from every call")
    func unavailable() async throws {
        let store = try store(.fail(.unavailable))
        for call in Self.everyCall(store) {
            let error = await #expect(throws: ServiceError.self) { try await call() }
            #expect(error?.code == .profileStorageUnavailable)
            #expect(error?.code.rawValue == "profile.storageUnavailable")
            #expect(error?.isRetryable == true)
        }
        #expect(await store.isReady() == false)
    }

    @Test("an unexpected storage failure gives a non-retryable profile.storageFailure")
    func failure() async throws {
        let store = try store(.fail(.failure))
        for call in Self.everyCall(store) {
            let error = await #expect(throws: ServiceError.self) { try await call() }
            #expect(error?.code == .profileStorageFailure)
            #expect(error?.isRetryable == false)
        }
    }

    @Test("a storage that never answers is abandoned at the operation timeout")
    func hangingStorage() async throws {
        let timeout = Duration.milliseconds(300)
        let store = try store(.hang, timeout: timeout)
        let clock = ContinuousClock()
        for call in Self.everyCall(store) {
            let start = clock.now
            let error = await #expect(throws: ServiceError.self) { try await call() }
            #expect(error?.code == .profileStorageUnavailable)
            #expect(error?.isRetryable == true)
            // Generous slack for a loaded machine; without the timeout this would take 10 s.
            #expect(clock.now - start < timeout + .seconds(3))
        }
    }
}
