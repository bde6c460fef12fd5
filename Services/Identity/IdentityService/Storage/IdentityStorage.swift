import KontoEvents
import KontoModel

/// Where Identity keeps credentials, sessions, failed-login counts, reset tokens, pending Profile clean-ups and its
/// event outbox: PostgreSQL, or memory for the dev stack and unit tests. One conformance suite covers both.
///
/// Each call is atomic, and every call that changes an account writes the change's events into the outbox in the
/// same transaction (the Notifications relay publishes them later), so no change is ever without its event.
/// Failed-login counts live here too, so every replica on one database sees the same counts.
public protocol IdentityStorage: OutboxStore {
    // MARK: Accounts

    /// Reserves a userId for a sign-up in progress: stored as pending, invisible to logins, but taken.
    /// - Throws: `conflict` when another account (pending or not) has the normalized userId.
    func reserveAccount(_ credential: StoredCredential) async throws(IdentityStorageError)

    /// Completes a reserved sign-up: the account becomes usable, with its first session.
    /// - Throws: `notFound` when the reservation is gone (abandoned as stale).
    func activateAccount(accountId: String, session: StoredSession, events: [AccountEvent]) async throws(IdentityStorageError)

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
    /// one transaction: the old token stops working at once.
    /// - Throws: `notFound` when the session is gone or its credential changed since.
    func replaceSession(id: String, with replacement: StoredSession) async throws(IdentityStorageError)

    /// The session with this token hash, valid or not (the caller checks expiry), with whether its account is
    /// anonymous; nil when there is none, or when it was created under a credential version that is not the
    /// account's any more.
    func session(tokenHash: [UInt8]) async throws(IdentityStorageError) -> StoredSession?

    /// Pushes the idle expiry forward (never back, never past the absolute one).
    func touchSession(id: String, idleExpiresAt: Timestamp) async throws(IdentityStorageError)

    /// Ends one session; false (and no events) when it was already gone.
    func deleteSession(id: String, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool

    /// Ends every session of the account but `keeping` (if given); `events` gets how many ended. Returns that number.
    func deleteSessions(accountId: String, keeping: String?, events: @escaping @Sendable (_ sessionsEnded: Int) -> [AccountEvent]) async throws(IdentityStorageError) -> Int

    // MARK: Failed logins (shared by every replica)

    /// Counts a failure against every key (e.g. the userId's and the client address's) at `now`. Failures older
    /// than `window` are forgotten first.
    func recordFailures(keys: [String], at now: Timestamp, window: Duration) async throws(IdentityStorageError)

    /// The current counts of `keys` (0 for a key without failures in `window`), in order, with each key's last
    /// failure.
    func failures(keys: [String], at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> [FailureCount]

    /// What a login reads before hashing, in one go: the keys' current counts (as ``failures(keys:at:window:)``), the
    /// account with this normalized userId (as ``credential(normalizedUserId:)``) and whether it has a second factor
    /// that a login must ask for.
    func loginLookup(normalizedUserId: String, keys: [String], at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> LoginLookup

    /// Takes one of a key's `limit` uses in `window` (an allowance, e.g. mails to an address an hour), checked and
    /// counted in one statement so concurrent requests cannot pass the limit together: nil when taken, else the
    /// key's count, used up (its last use says when one frees up). A refused request does not extend the window.
    func takeAllowance(key: String, limit: Int, at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> FailureCount?

    /// Forgets a key's failures (after a successful login).
    func clearFailures(key: String) async throws(IdentityStorageError)

    // MARK: Known clients (so that strangers' failures do not lock the owner out)

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

    // MARK: Password reset tokens

    /// Stores a reset token's hash (single use, until `expiresAt`), with the `passwordResetRequested` event.
    /// - Throws: `notFound` when the account is gone.
    func createResetToken(tokenHash: [UInt8], accountId: String, expiresAt: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError)

    /// The account a reset token would reset at `now`; nil for an unknown or expired one. Asked before the new
    /// password is hashed, so a made-up token costs no hash (the confirmation itself decides).
    func resetTokenAccount(tokenHash: [UInt8], at now: Timestamp) async throws(IdentityStorageError) -> String?

    /// Uses a reset token: when it exists and has not expired at `now`, it is removed, the password hash replaced
    /// (the credential version raised), every session and every other reset token of the account ended, and a locked
    /// second factor opened (``clearFactorAnswers(accountId:)``), in one transaction. An expired token is removed too
    /// and gives nil, so a token works at most once.
    func confirmPasswordReset(
        tokenHash: [UInt8],
        at now: Timestamp,
        passwordHash: String,
        events: @escaping @Sendable (_ accountId: String, _ sessionsEnded: Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> ConfirmedPasswordReset?

    // MARK: Email verification

    /// Stores a verification token's hash for `address` (single use, until `expiresAt`), with the mail's event.
    /// `isUserId`: the address is the account's userId (else its contact address, the `email` detail Profile holds,
    /// where userIds are usernames).
    /// - Throws: `notFound` when the account is gone, or (`isUserId`) `address` is not its userId any more.
    func createEmailVerification(tokenHash: [UInt8], accountId: String, address: String, isUserId: Bool, expiresAt: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError)

    /// Uses a verification token: when it exists and has not expired at `now`, it is removed and, with `events`, in
    /// one transaction: a userId's address is marked verified at `now` if it is still the account's userId; a contact
    /// address becomes the account's ``StoredCredential/verifiedEmail``. The account's id; nil otherwise (an expired
    /// token or one for a former userId is removed too: it works at most once).
    func confirmEmailVerification(tokenHash: [UInt8], at now: Timestamp, events: @escaping @Sendable (_ accountId: String) -> [AccountEvent]) async throws(IdentityStorageError) -> String?

    /// The account's first proof of its address (docs/IDENTITY.md, "Pre-hijacked accounts"), called right after the
    /// proof: when the account was never proven before (no proof recorded, and its address not verified when it was
    /// made, as a provider's vouching does), records it as proven and, in the same transaction, ends what it gained while
    /// unproven: every session but `keeping`, the password unless `keepingPassword`, every factor and every linked
    /// identity (a provider token kept for one revoked as an unlink does). The credential's version is raised, so a
    /// sign-in that checked the old state leaves no session. Nil when the account was proven before (or is gone).
    func endAccessBeforeFirstProof(
        accountId: String, keeping: String?, keepingPassword: Bool, at now: Timestamp, events: @escaping @Sendable (AccessEnded) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> AccessEnded?

    // MARK: Sign-in codes

    /// Stores a sign-in code's digest for the account under its credential's version (until `expiresAt`), with the
    /// mail's event, in one transaction.
    /// - Throws: `notFound` when the account is gone or its credential is no longer at `credentialVersion`.
    func createEmailCode(accountId: String, codeDigest: [UInt8], credentialVersion: Int64, expiresAt: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError)

    /// Uses a sign-in code: when the account has one with this digest, unexpired at `now`, made under its credential's
    /// current version, every code of the account is removed (one sign-in per mail), its address is marked verified
    /// at `now` if it was not (the code reached it), and `events` (told whether it was) are appended, in one
    /// transaction; the credential's version and the code's expiry. nil otherwise, and nothing changes.
    func useEmailCode(
        accountId: String, codeDigest: [UInt8], at now: Timestamp, events: @escaping @Sendable (_ newlyVerified: Bool) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> UsedEmailCode?

    // MARK: Profile clean-ups

    /// Accounts whose profile is due for deletion at `now`, oldest first.
    func dueProfileCleanups(at now: Timestamp, limit: Int) async throws(IdentityStorageError) -> [String]

    /// The profile is gone: forget the clean-up.
    func finishProfileCleanup(accountId: String) async throws(IdentityStorageError)

    /// Tries again later.
    func postponeProfileCleanup(accountId: String, until: Timestamp) async throws(IdentityStorageError)

    /// Abandons reservations made before `cutoff` (a sign-up that never finished: its process died), scheduling
    /// their profiles' deletion at `profileCleanupAt`. Returns how many.
    func abandonStaleReservations(before cutoff: Timestamp, profileCleanupAt: Timestamp) async throws(IdentityStorageError) -> Int

    /// Retention: deletes up to `limit` sessions past their idle or absolute expiry and reset tokens past theirs,
    /// then up to `limit` anonymous accounts with no session left (never upgraded: no one can sign in to them
    /// again), each with the events `events` gives and its profile's deletion scheduled at `profileCleanupAt`.
    func pruneExpired(
        at now: Timestamp,
        profileCleanupAt: Timestamp,
        limit: Int,
        events: @escaping @Sendable (_ accountId: String) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> PrunedRecords

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

    // MARK: Second factors

    /// The account's factors (pending TOTP enrolments included), oldest first; recovery codes with how many are unused.
    func factors(accountId: String) async throws(IdentityStorageError) -> [StoredFactor]

    /// Stores a pending TOTP enrolment, dropping the account's other pending ones (one enrolment at a time).
    /// - Throws: `notFound` when the account is gone.
    func addPendingFactor(_ factor: StoredFactor) async throws(IdentityStorageError)

    /// Confirms a pending enrolment of the account with the step of its first code (which is used up), with `events`.
    /// Returns false when there is no such pending factor.
    func confirmFactor(accountId: String, factorId: String, step: Int64, at now: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool

    /// Uses a confirmed TOTP's `step`: only when it is later than the last step used (a code is accepted once, and no
    /// earlier one after it), atomically, so two concurrent uses of one code cannot both succeed.
    func useFactorStep(accountId: String, factorId: String, step: Int64, at now: Timestamp) async throws(IdentityStorageError) -> Bool

    /// Removes a factor of the account (its recovery codes with it), with the events `events` gives for its kind and
    /// the number of confirmed factors demanding a second factor left. Returns the kind removed and that number, nil
    /// when there is no such factor.
    func removeFactor(
        accountId: String,
        factorId: String,
        events: @escaping @Sendable (_ kind: StoredFactor.Kind, _ remaining: Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> (kind: StoredFactor.Kind, remaining: Int)?

    /// Replaces the account's recovery codes (every earlier one stops working) by `factor` and the codes' hashes.
    /// - Throws: `notFound` when the account is gone.
    func replaceRecoveryCodes(_ factor: StoredFactor, codeHashes: [[UInt8]], events: [AccountEvent]) async throws(IdentityStorageError)

    /// Uses one unused recovery code of the account, atomically (a code works once, also under concurrent uses),
    /// with the events `events` gives for the number left. Returns that number, nil when no unused code has this hash.
    func useRecoveryCode(
        accountId: String,
        codeHash: [UInt8],
        at now: Timestamp,
        events: @escaping @Sendable (_ remaining: Int) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> Int?

    /// Stores a registered passkey (`factor`, confirmed, with its credential ID and counter) with `events`. Returns false
    /// when a passkey with this credential ID is registered already (to any account).
    /// - Throws: `notFound` when the account is gone.
    func addPasskey(_ factor: StoredFactor, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool

    /// The passkey with this credential ID, of whichever account holds it; nil when none does.
    func passkey(credentialId: [UInt8]) async throws(IdentityStorageError) -> StoredFactor?

    /// Records a passkey's use: its counter becomes `newSignCount` only while it still is `signCount`, atomically, so
    /// of two concurrent uses signed with one counter value only one succeeds.
    func usePasskey(accountId: String, factorId: String, signCount: Int64, newSignCount: Int64, at now: Timestamp) async throws(IdentityStorageError) -> Bool

    /// Marks a passkey challenge (its SHA-256) used until it expires; false when it was used already. Challenges are
    /// issued without storage (they are signed); this makes each work once.
    func consumePasskeyChallenge(hash: [UInt8], expiresAt: Timestamp) async throws(IdentityStorageError) -> Bool

    // MARK: Login challenges

    func createChallenge(_ challenge: StoredChallenge) async throws(IdentityStorageError)

    /// Takes one of the challenge's answers: the challenge with this token hash, unexpired at `now`, when fewer than
    /// `allowing` answers were taken from it before; nil otherwise. Taken before the answer is checked, in one
    /// statement, so concurrent answers cannot pass the bound together (a login challenge allows a few answers, not
    /// unlimited).
    func answerChallenge(tokenHash: [UInt8], at now: Timestamp, allowing: Int) async throws(IdentityStorageError) -> StoredChallenge?

    /// Uses the challenge (it is removed) and creates the session it leads to, in one transaction: the challenge
    /// works once. Returns false when it is gone or expired.
    /// - Throws: `notFound` when the account is gone or its credential changed since the password was checked.
    func completeChallenge(tokenHash: [UInt8], at now: Timestamp, session: StoredSession, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool

    // MARK: The second factor's hard stop (docs/IDENTITY.md, "Second factor")

    /// Counts an answer of the account's second factor before it is checked, in one statement, so concurrent answers
    /// each get their own place in the count: the consecutive answers not shown right since the last right one, this
    /// one included (past the lock, an answer is refused unchecked). Nil when the account is gone.
    func countFactorAnswer(accountId: String) async throws(IdentityStorageError) -> Int?

    /// The consecutive answers not shown right (0 when none).
    func factorAnswers(accountId: String) async throws(IdentityStorageError) -> Int

    /// A right answer, a recovery or a password reset: the count starts again (and a locked factor is open).
    func clearFactorAnswers(accountId: String) async throws(IdentityStorageError)

    /// Appends events that go with no change of their own (the mail telling the owner of wrong second-factor answers).
    func appendEvents(_ events: [AccountEvent]) async throws(IdentityStorageError)

    // MARK: Outbox and health

    /// The events not yet published, oldest first (the relay's and the tests' view).
    func pendingEvents(limit: Int) async throws(IdentityStorageError) -> [AccountEvent]

    func checkHealth() async throws(IdentityStorageError)
}

extension IdentityStorage {
    /// The two reads one after the other; PostgreSQL's storage answers both with one statement (one round trip fewer
    /// per login, which the login benchmark measures).
    public func loginLookup(normalizedUserId: String, keys: [String], at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> LoginLookup {
        let counts = try await failures(keys: keys, at: now, window: window)
        let credential = try await credential(normalizedUserId: normalizedUserId)
        var demands = false
        if let credential {
            demands = try await factors(accountId: credential.accountId).contains(where: \.demandsSecondFactor)
        }
        return LoginLookup(counts: counts, credential: credential, demandsSecondFactor: demands)
    }
}

extension IdentityStorage {
    /// A token for the account's userId.
    func createEmailVerification(tokenHash: [UInt8], accountId: String, address: String, expiresAt: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) {
        try await createEmailVerification(tokenHash: tokenHash, accountId: accountId, address: address, isUserId: true, expiresAt: expiresAt, events: events)
    }
}

/// A sign-in code just used: the credential version it was made under, and until when it would have worked.
public struct UsedEmailCode: Sendable, Equatable {
    public var credentialVersion: Int64
    public var expiresAt: Timestamp

    public init(credentialVersion: Int64, expiresAt: Timestamp) {
        self.credentialVersion = credentialVersion
        self.expiresAt = expiresAt
    }
}

/// What a login reads before hashing.
public struct LoginLookup: Sendable, Equatable {
    /// In the order of the keys asked for.
    public var counts: [FailureCount]
    /// Nil when there is no such account or it is still pending.
    public var credential: StoredCredential?
    /// The account has a confirmed second factor: a correct password gives a challenge, not a session.
    public var demandsSecondFactor: Bool

    public init(counts: [FailureCount], credential: StoredCredential?, demandsSecondFactor: Bool = false) {
        self.counts = counts
        self.credential = credential
        self.demandsSecondFactor = demandsSecondFactor
    }
}

/// A password reset that took effect.
public struct ConfirmedPasswordReset: Sendable, Equatable {
    public var accountId: String
    public var sessionsEnded: Int

    public init(accountId: String, sessionsEnded: Int) {
        self.accountId = accountId
        self.sessionsEnded = sessionsEnded
    }
}

/// One throttling key's failures.
public struct FailureCount: Sendable, Equatable {
    public var count: Int
    public var lastFailureAt: Timestamp?

    public init(count: Int, lastFailureAt: Timestamp?) {
        self.count = count
        self.lastFailureAt = lastFailureAt
    }

    public static let none = FailureCount(count: 0, lastFailureAt: nil)
}

/// What one retention pass deleted.
public struct PrunedRecords: Sendable, Equatable {
    public var sessions: Int
    public var resetTokens: Int
    public var anonymousAccounts: Int

    public init(sessions: Int = 0, resetTokens: Int = 0, anonymousAccounts: Int = 0) {
        self.sessions = sessions
        self.resetTokens = resetTokens
        self.anonymousAccounts = anonymousAccounts
    }
}
