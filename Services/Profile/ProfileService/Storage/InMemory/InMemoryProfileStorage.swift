import KontoModel
import KontoRuntime
import Synchronization

/// Keeps records in process memory, for the dev stack and unit tests; gone when the process ends.
public final class InMemoryProfileStorage: ProfileStorage {
    private let records = Mutex<[String: StoredProfile]>([:])
    private let outbox = Mutex<[AccountEvent]>([])
    private let outboxChanged = Wakeup()

    public init() {}

    public func insert(accountId: String, values: [String: AccountValue]) throws(ProfileStorageError) -> Int64 {
        let inserted = records.withLock { records -> Bool in
            guard records[accountId] == nil else { return false }
            records[accountId] = StoredProfile(values: values, version: 1)
            return true
        }
        guard inserted else { throw ProfileStorageError(.conflict) }
        return 1
    }

    public func fetch(accountId: String) -> StoredProfile? {
        records.withLock { $0[accountId] }
    }

    /// Never waits, so needs no timer.
    public func fetch(accountId: String, keys: [String]?, timeout: Duration) -> StoredProfile? {
        fetch(accountId: accountId)?.keeping(keys)
    }

    public func replace(accountId: String, values: [String: AccountValue], ifVersion: Int64, events: [AccountEvent]) -> Int64? {
        let version = records.withLock { records -> Int64? in
            guard let current = records[accountId], current.version == ifVersion else { return nil }
            records[accountId] = StoredProfile(values: values, version: current.version + 1)
            // Under the records' lock: a concurrent replace of the account cannot put its events before these.
            outbox.withLock { $0 += events }
            return current.version + 1
        }
        if version != nil, !events.isEmpty {
            outboxChanged.notify()
        }
        return version
    }

    public func pendingEvents(limit: Int) -> [AccountEvent] {
        outbox.withLock { Array($0.prefix(limit)) }
    }

    public func drainOutbox(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int {
        let events = outbox.withLock { Array($0.prefix(limit)) }
        guard !events.isEmpty else { return 0 }
        try await publish(events)
        // Only this process drains, and appends go to the end: the published events are still the first ones.
        outbox.withLock { $0.removeFirst(events.count) }
        return events.count
    }

    public func watchOutbox(_ changed: @escaping @Sendable () -> Void) async throws {
        while !Task.isCancelled {
            let generation = outboxChanged.generation
            await outboxChanged.wait(after: generation, timeout: .seconds(60))
            changed()
        }
    }

    public func delete(accountId: String) -> Bool {
        records.withLock { $0.removeValue(forKey: accountId) != nil }
    }

    public func checkHealth() {}
}
