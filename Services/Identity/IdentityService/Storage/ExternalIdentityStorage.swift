import KontoEvents
import KontoModel

/// The identities external providers vouch for: their links to accounts, the provider tokens' once-only nonces, and
/// the queue of provider refresh tokens to revoke.
/// Part of ``IdentityStorage``; the same rules hold (each call atomic, every change with its events in the outbox).
public protocol ExternalIdentityStorage: Sendable {
    // MARK: External identities

    /// The identity a provider's subject is linked as, with its account's credential (an active account only).
    func externalIdentity(provider: String, subject: String) async throws(IdentityStorageError) -> (identity: StoredExternalIdentity, credential: StoredCredential)?

    /// The account's linked identities, oldest first.
    func externalIdentities(accountId: String) async throws(IdentityStorageError) -> [StoredExternalIdentity]

    /// Links an identity to its account (active, or reserved by a sign-up in progress) with its events; false when
    /// the provider's subject is linked already, to this account or another. `notFound` when the account is gone.
    func addExternalIdentity(_ identity: StoredExternalIdentity, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool

    /// Unlinks one of the account's identities with its events. With `keepingWayIn`, only while the account keeps a
    /// password or another identity, checked and done under the account's lock (two concurrent unlinks of its last
    /// two identities leave one).
    func removeExternalIdentity(accountId: String, identityId: String, keepingWayIn: Bool, events: [AccountEvent]) async throws(IdentityStorageError) -> ExternalIdentityRemoval

    /// Records a sign-in with the identity: when, what the provider said of the address, and the provider's newest
    /// refresh token (sealed) when one came.
    func touchExternalIdentity(id: String, email: String?, emailVerified: Bool, at now: Timestamp, sealedRefreshToken: [UInt8]?) async throws(IdentityStorageError)

    /// Remembers an ID token's nonce (its digest) until the token expires; false when it is remembered already: the
    /// token was used.
    func useNonce(digest: [UInt8], expiresAt: Timestamp) async throws(IdentityStorageError) -> Bool

    /// Up to `limit` revocations due at `now`, each leased until `leaseUntil` (another replica does not take it
    /// meanwhile).
    func dueRevocations(at now: Timestamp, leaseUntil: Timestamp, limit: Int) async throws(IdentityStorageError) -> [StoredRevocation]

    /// A revocation the provider confirmed: forgotten.
    func finishRevocation(id: String) async throws(IdentityStorageError)

    /// A failed attempt: tried again at `retryAt`, or given up at `now` (kept as dead, with its attempts, until
    /// ``pruneDeadRevocations(givenUpBefore:)``) when nil.
    func failRevocation(id: String, attempts: Int, retryAt: Timestamp?, at now: Timestamp) async throws(IdentityStorageError)

    /// Forgets revocations given up before `cutoff`, their sealed token and accountId with them: nothing of a deleted
    /// account stays for ever because its provider never answered. How many went.
    func pruneDeadRevocations(givenUpBefore cutoff: Timestamp) async throws(IdentityStorageError) -> Int

    /// The revocations given up, for the operator (and tests).
    func deadRevocations() async throws(IdentityStorageError) -> [StoredRevocation]
}
