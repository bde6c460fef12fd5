import KontoEvents
import KontoModel
import KontoPostgres

/// Where the Profile service keeps account details: deliberately dumb and atomic.
///
/// A storage knows nothing of the key schema; ``ProfileStore`` checks everything before it writes. Each call is
/// atomic on its own, and ``replace(accountId:values:ifVersion:)`` is a compare-and-set, so the store can build
/// read–modify–write on top without locks. Values never include the `accountId` (it is the record's key).
///
/// A change's events (`detailsChanged`) go into the storage's outbox in the same atomic call as the change; the
/// outbox relay publishes them to Notifications.
public protocol ProfileStorage: OutboxStore {
    /// Stores a new record at version 1.
    /// - Throws: ``ProfileStorageError`` `alreadyExists` when the account has a record.
    func insert(accountId: String, values: [String: AccountValue]) async throws(ProfileStorageError) -> Int64

    /// The record, or `nil` when there is none.
    func fetch(accountId: String) async throws(ProfileStorageError) -> StoredProfile?

    /// ``fetch(accountId:)`` bounded by `timeout`; past it, fails `unavailable` (underlying ``OperationTimeoutError``).
    /// With `keys`, the record's values are only those of `keys` it has (a load's few keys need no more read).
    ///
    /// Reads are most of the traffic, so a storage that can bound its waits more cheaply than a task and a timer per
    /// call (PostgreSQL's batched lookups) implements this; the default runs ``fetch(accountId:)`` under
    /// ``OperationTimeout``.
    func fetch(accountId: String, keys: [String]?, timeout: Duration) async throws(ProfileStorageError) -> StoredProfile?

    /// Replaces the values if the record is still at `ifVersion`, writing `events` to the outbox with it, and returns
    /// the new version; `nil` (and no events) when the version moved on or the record is gone.
    func replace(accountId: String, values: [String: AccountValue], ifVersion: Int64, events: [AccountEvent]) async throws(ProfileStorageError) -> Int64?

    /// The events not yet published, oldest first (the tests' view of the outbox).
    func pendingEvents(limit: Int) async throws(ProfileStorageError) -> [AccountEvent]

    /// Removes the record; `false` when there was none.
    func delete(accountId: String) async throws(ProfileStorageError) -> Bool

    /// Throws when the storage cannot serve requests.
    func checkHealth() async throws(ProfileStorageError)
}

extension ProfileStorage {
    /// A replace without events.
    public func replace(accountId: String, values: [String: AccountValue], ifVersion: Int64) async throws(ProfileStorageError) -> Int64? {
        try await replace(accountId: accountId, values: values, ifVersion: ifVersion, events: [])
    }

    public func fetch(accountId: String, keys: [String]?, timeout: Duration) async throws(ProfileStorageError) -> StoredProfile? {
        do {
            return try await OperationTimeout.run(timeout) {
                try await self.fetch(accountId: accountId)
            }?.keeping(keys)
        } catch {
            throw .abandoned(error)
        }
    }
}
