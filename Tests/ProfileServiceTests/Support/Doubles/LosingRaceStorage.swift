import KontoModel
import ProfileService
import Synchronization

/// A storage where another writer always gets in first: every compare-and-set fails, as under endless contention.
final class LosingRaceStorage: ProfileStorage {
    private let base = InMemoryProfileStorage()
    private let attempts = Mutex(0)

    var replaceAttempts: Int { attempts.withLock { $0 } }

    func insert(accountId: String, values: [String: AccountValue]) async throws(ProfileStorageError) -> Int64 {
        try base.insert(accountId: accountId, values: values)
    }

    func fetch(accountId: String) async throws(ProfileStorageError) -> StoredProfile? {
        base.fetch(accountId: accountId)
    }

    func replace(accountId: String, values: [String: AccountValue], ifVersion: Int64, events: [AccountEvent]) async throws(ProfileStorageError) -> Int64? {
        attempts.withLock { $0 += 1 }
        return nil
    }

    func pendingEvents(limit: Int) -> [AccountEvent] {
        base.pendingEvents(limit: limit)
    }

    func drainOutbox(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int {
        try await base.drainOutbox(limit: limit, publish: publish)
    }

    func watchOutbox(_ changed: @escaping @Sendable () -> Void) async throws {
        try await base.watchOutbox(changed)
    }


    func delete(accountId: String) async throws(ProfileStorageError) -> Bool {
        base.delete(accountId: accountId)
    }

    func checkHealth() async throws(ProfileStorageError) {}
}
