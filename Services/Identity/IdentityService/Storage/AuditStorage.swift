import KontoModel

/// Identity's audit log (docs/ADMIN.md, "Audit log"). Entries of a change are written with its events, in its
/// transaction (every call of ``IdentityStorage`` that writes events writes their ``AuditRecord/records(for:scope:)``);
/// the calls here append entries that go with no change, seal them into the hash chain and read them back.
/// Part of ``IdentityStorage``; a conformance suite covers both storages.
public protocol AuditStorage: Sendable {
    /// Appends entries that go with no change of their own (an operator's read, a refused operator key).
    func appendAudit(_ records: [AuditRecord]) async throws(IdentityStorageError)

    /// Appends entries about an account that go with no change of its own (its owner's export), only while the account
    /// exists, in one step with that check: an entry with personal data (the client's address) never lands after the
    /// deletion that erased the account's. False, and nothing written, when the account is gone.
    func appendAudit(_ records: [AuditRecord], whileAccountExists accountId: String) async throws(IdentityStorageError) -> Bool

    /// Seals up to `limit` committed entries not sealed yet, in insertion order, after the chain's head (one sealer at
    /// a time; entries of transactions still open are sealed by a later call). Returns how many.
    func sealAudit(limit: Int) async throws(IdentityStorageError) -> Int

    /// The chain's anchor and head.
    func auditChainState() async throws(IdentityStorageError) -> AuditChainState

    /// Sealed entries after `position`, in the chain's order, at most `limit`.
    func auditChain(after position: Int64, limit: Int) async throws(IdentityStorageError) -> [StoredAuditEntry]

    /// Entries (sealed or not) matching `query`, newest first by insertion.
    func auditEntries(_ query: AuditQuery) async throws(IdentityStorageError) -> [StoredAuditEntry]

    /// Retention: removes at most `limit` of the chain's oldest sealed entries, each older than `cutoff` and only up to
    /// the first that is not (the chain stays whole), and moves the anchor to the last one removed. Returns how many.
    func pruneAudit(before cutoff: Timestamp, limit: Int) async throws(IdentityStorageError) -> Int
}
