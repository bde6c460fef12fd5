import KontoModel
import Synchronization

/// Keeps records in process memory, for the dev stack and unit tests; gone when the process ends.
public final class InMemoryProfileStorage: ProfileStorage {
    private let records = Mutex<[String: StoredProfile]>([:])

    public init() {}

    public func insert(accountId: String, values: [String: AccountValue]) throws(ProfileStorageError) -> Int64 {
        let inserted = records.withLock { records -> Bool in
            guard records[accountId] == nil else { return false }
            records[accountId] = StoredProfile(values: values, version: 1)
            return true
        }
        guard inserted else { throw ProfileStorageError(.alreadyExists) }
        return 1
    }

    public func fetch(accountId: String) -> StoredProfile? {
        records.withLock { $0[accountId] }
    }

    /// Never waits, so needs no timer.
    public func fetch(accountId: String, keys: [String]?, timeout: Duration) -> StoredProfile? {
        fetch(accountId: accountId)?.keeping(keys)
    }

    public func replace(accountId: String, values: [String: AccountValue], ifVersion: Int64) -> Int64? {
        records.withLock { records -> Int64? in
            guard let current = records[accountId], current.version == ifVersion else { return nil }
            records[accountId] = StoredProfile(values: values, version: current.version + 1)
            return current.version + 1
        }
    }

    public func delete(accountId: String) -> Bool {
        records.withLock { $0.removeValue(forKey: accountId) != nil }
    }

    public func checkHealth() {}
}
