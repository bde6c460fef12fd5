import KontoModel
import ProfileService

/// A storage that fails every call in one way, to check how the store reports each kind of failure.
struct FailingStorage: ProfileStorage {
    enum Behaviour: Sendable {
        /// Throws this error at once.
        case fail(ProfileStorageError.Code)
        /// Never answers, and ignores cancellation, like a query on a connection whose peer vanished.
        case hang
    }

    let behaviour: Behaviour

    private func failure() async throws(ProfileStorageError) -> Never {
        switch behaviour {
        case let .fail(code):
            throw ProfileStorageError(code)
        case .hang:
            await Task.detached { try? await Task.sleep(for: .seconds(10)) }.value
            throw ProfileStorageError(.unavailable)
        }
    }

    func insert(accountId: String, values: [String: AccountValue]) async throws(ProfileStorageError) -> Int64 { try await failure() }
    func fetch(accountId: String) async throws(ProfileStorageError) -> StoredProfile? { try await failure() }
    func replace(accountId: String, values: [String: AccountValue], ifVersion: Int64, events: [AccountEvent]) async throws(ProfileStorageError) -> Int64? { try await failure() }
    func pendingEvents(limit: Int) async throws(ProfileStorageError) -> [AccountEvent] { try await failure() }
    func drainOutbox(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int { try await failure() }
    func watchOutbox(_ changed: @escaping @Sendable () -> Void) async throws { try await failure() }
    func delete(accountId: String) async throws(ProfileStorageError) -> Bool { try await failure() }
    func checkHealth() async throws(ProfileStorageError) { try await failure() }
}
