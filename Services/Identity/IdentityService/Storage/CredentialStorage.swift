import KontoEvents
import KontoModel

/// Identity's credentials and sessions: accounts (reserved, activated, anonymous, upgraded, changed, deleted), their
/// sessions, the failed-login counts every replica shares, and the clients known to be an account's owner.
/// Part of ``IdentityStorage``; the same rules hold (each call atomic, every change with its events in the outbox).
public protocol CredentialStorage: Sendable {
    // MARK: Accounts

    /// Reserves a userId for a sign-up in progress: stored as pending, invisible to logins, but taken.
    /// - Throws: `conflict` when another account (pending or not) has the normalized userId.
    func reserveAccount(_ credential: StoredCredential) async throws(IdentityStorageError)

    /// Completes a reserved sign-up: the account becomes usable, with its first session (none for an account an
    /// operator made: its owner signs in themselves).
    /// - Throws: `notFound` when the reservation is gone (abandoned as stale).
    func activateAccount(accountId: String, session: StoredSession?, events: [AccountEvent]) async throws(IdentityStorageError)

    /// Drops a reservation (its userId is free again) and, with `profileCleanupAt`, schedules deleting the account's
    /// profile from then on, in the same transaction: a `profile.create` that timed out may still have committed.
    func abandonAccount(accountId: String, profileCleanupAt: Timestamp?) async throws(IdentityStorageError)

    /// Stores an anonymous account (no userId, no password) with its first session.
    func createAnonymousAccount(_ credential: StoredCredential, session: StoredSession, events: [AccountEvent]) async throws(IdentityStorageError)

    /// The account's credentials; nil when there is none or it is still pending.
    func credential(accountId: String) async throws(IdentityStorageError) -> StoredCredential?

    /// The account with this normalized userId; nil when there is none or it is still pending.
    func credential(normalizedUserId: String) async throws(IdentityStorageError) -> StoredCredential?

    /// Gives an anonymous account a userId and password, keeping its accountId: a credential change (its version is
    /// raised), so every session of the account ends and `session` (created under the raised version) replaces
    /// them, all in one transaction.
    /// - Throws: `conflict`; `notFound` when the account is gone or not anonymous any more.
    func upgradeAnonymous(
        accountId: String,
        userId: String,
        normalizedUserId: String,
        passwordHash: String?,
        session: StoredSession,
        events: [AccountEvent]
    ) async throws(IdentityStorageError)

    /// Replaces the password hash and raises the credential version; every other session of the account and every
    /// reset token of it end in the same transaction (`keeping`, the session making the change, moves to the new
    /// version). `events` gets how many sessions ended. Returns that number.
    /// - Throws: `notFound`.
    func changePassword(
        accountId: String,
        passwordHash: String,
        keeping: String?,
        events: @escaping @Sendable (_ sessionsEnded: Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> Int

    /// Replaces the password hash with one of the same password under today's parameters, only while the credential
    /// is still at `credentialVersion` (so a rehash never writes an old password back over a newer one). Returns
    /// whether it did.
    func rehashPassword(accountId: String, passwordHash: String, credentialVersion: Int64) async throws(IdentityStorageError) -> Bool

    /// Gives the account a new userId: a credential change like ``changePassword(accountId:passwordHash:keeping:events:)``
    /// (version raised; other sessions and every reset token end). Returns how many sessions ended.
    /// - Throws: `conflict`, `notFound`.
    func changeUserId(
        accountId: String,
        userId: String,
        normalizedUserId: String,
        keeping: String?,
        events: @escaping @Sendable (_ sessionsEnded: Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> Int

    /// Writes `events` (`deletingAccount`) first, then removes the credentials, every session and reset token of the
    /// account, and schedules its profile's deletion at `profileCleanupAt`, all in one transaction.
    /// Returns false (and changes nothing) when there was no such account.
    func deleteAccount(accountId: String, events: [AccountEvent], profileCleanupAt: Timestamp) async throws(IdentityStorageError) -> Bool

    // MARK: Sessions

    /// - Throws: `notFound` when the account is gone, or its credential is no longer at the session's
    ///   ``StoredSession/credentialVersion`` (the password checked for it has changed since).
    func createSession(_ session: StoredSession, events: [AccountEvent]) async throws(IdentityStorageError)

    /// Replaces session `id` by `replacement` (a fresh token for the same sign-in, e.g. after a reauthentication), in
    /// one transaction: the old token stops working at once. What the replacement leaves nil of its sign-in method and
    /// client is kept from the session it replaces (a lookup's session does not carry them).
    /// - Throws: `notFound` when the session is gone or its credential changed since.
    func replaceSession(id: String, with replacement: StoredSession) async throws(IdentityStorageError)

    /// The session with this token hash, valid or not (the caller checks expiry), with whether its account is
    /// anonymous; nil when there is none, or when it was created under a credential version that is not the
    /// account's any more. Without its last use, sign-in method and client, which validation does not need (the
    /// account's list of sessions has them).
    func session(tokenHash: [UInt8]) async throws(IdentityStorageError) -> StoredSession?

    /// The account's sessions made under its current credential version, oldest first, with their client and sign-in
    /// method (the owner's list of sessions, an operator's); nil for no account (or a pending sign-up). Expired ones
    /// are the caller's to leave out.
    func accountSessions(accountId: String) async throws(IdentityStorageError) -> [StoredSession]?

    /// The optional mails the owner turned off (``MailRequest/Message`` names); nil for no account (or a pending one).
    func mailOptOuts(accountId: String) async throws(IdentityStorageError) -> Set<String>?

    /// Sets them, with `audit` in the same transaction; false (nothing written) for no account.
    func setMailOptOuts(accountId: String, _ optOuts: Set<String>, audit: [AuditRecord]) async throws(IdentityStorageError) -> Bool

    /// Pushes the idle expiry forward (never back, never past the absolute one) and notes the use at `now`.
    func touchSession(id: String, idleExpiresAt: Timestamp, at now: Timestamp) async throws(IdentityStorageError)

    /// Ends one session; false (and no events) when it was already gone.
    func deleteSession(id: String, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool

    /// Ends every session of the account but `keeping` (if given); `events` gets how many ended. Returns that number.
    /// With none kept (logging out everywhere, an operator ending them all), every application's sign-in (the
    /// account's OpenID grants, with their refresh tokens; access tokens are checked against them) ends in the same
    /// step: no device and no application stays signed in. Consents stay.
    func deleteSessions(accountId: String, keeping: String?, events: @escaping @Sendable (_ sessionsEnded: Int) -> [AccountEvent]) async throws(IdentityStorageError) -> Int

    // MARK: Failed logins

    /// Counts a failure against every key (e.g. the userId's and the client address's) at `now`, and appends the
    /// failure's audit entries in the same transaction. Failures older than `window` are forgotten first.
    func recordFailures(keys: [String], at now: Timestamp, window: Duration, audit: [AuditRecord]) async throws(IdentityStorageError)

    /// The current counts of `keys` (0 for a key without failures in `window`), in order, with each key's last
    /// failure.
    func failures(keys: [String], at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> [FailureCount]


    /// Takes one of a key's `limit` uses in `window` (an allowance, e.g. mails to an address an hour), checked and
    /// counted in one statement so concurrent requests cannot pass the limit together: nil when taken, else the
    /// key's count, used up (its last use says when one frees up). A refused request does not extend the window.
    func takeAllowance(key: String, limit: Int, at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> FailureCount?

    /// Forgets a key's failures (after a successful login).
    func clearFailures(key: String) async throws(IdentityStorageError)

    // MARK: Known clients

    /// Remembers clients (keyed digests of a client address or a device marker) that signed in to the account at `now`.
    /// Nothing happens when the account is gone. Returns whether any of them was remembered before (true too when the
    /// account is gone or no client is given: nothing new to tell the owner of).
    @discardableResult
    func rememberClients(accountId: String, clients: [[UInt8]], at now: Timestamp) async throws(IdentityStorageError) -> Bool

    /// Whether any of `clients` signed in to the account since `since`.
    func isKnownClient(accountId: String, clients: [[UInt8]], since: Timestamp) async throws(IdentityStorageError) -> Bool

    /// Forgets clients whose last sign-in is before `cutoff` (no longer known; what is kept of them is a hash of an
    /// address, which need not stay). Returns how many.
    func pruneKnownClients(before cutoff: Timestamp) async throws(IdentityStorageError) -> Int

    /// Forgets every key whose last failure is before `cutoff` (out of every window), so a spray of guessed userIds
    /// does not grow the table for ever. Returns how many.
    func pruneFailures(before cutoff: Timestamp) async throws(IdentityStorageError) -> Int
}

extension CredentialStorage {
    /// Counts a failure with no audit entry (a throttled allowance, a second factor's answers counted per account).
    public func recordFailures(keys: [String], at now: Timestamp, window: Duration) async throws(IdentityStorageError) {
        try await recordFailures(keys: keys, at: now, window: window, audit: [])
    }
}
