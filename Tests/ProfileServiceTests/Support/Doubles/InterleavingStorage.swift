import KontoModel
import ProfileService
import Synchronization

/// A storage where, just before the store's first compare-and-set, another writer changes the record:
/// the interleaving that loses an update when read–modify–write is not checked.
final class InterleavingStorage: ProfileStorage {
    private let base = InMemoryProfileStorage()
    private let interference: Mutex<[String: AccountValue]?>

    /// `write` is set into the record by the "other writer", once.
    init(otherWriter write: [String: AccountValue]) {
        interference = Mutex(write)
    }

    func insert(accountId: String, values: [String: AccountValue]) throws(ProfileStorageError) -> Int64 {
        try base.insert(accountId: accountId, values: values)
    }

    func fetch(accountId: String) -> StoredProfile? {
        base.fetch(accountId: accountId)
    }

    func replace(accountId: String, values: [String: AccountValue], ifVersion: Int64, events: [AccountEvent]) -> Int64? {
        if let write = interference.withLock({ $0.take() }), let current = base.fetch(accountId: accountId) {
            _ = base.replace(accountId: accountId, values: current.values.merging(write) { _, new in new }, ifVersion: current.version, events: [])
        }
        return base.replace(accountId: accountId, values: values, ifVersion: ifVersion, events: events)
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


    func delete(accountId: String) -> Bool {
        base.delete(accountId: accountId)
    }

    func checkHealth() {}
}
