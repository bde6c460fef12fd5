import KontoEvents
import KontoModel

/// Where Identity keeps credentials, sessions, failed-login counts, reset tokens, pending Profile clean-ups and its
/// event outbox: PostgreSQL, or memory for the dev stack and unit tests. One conformance suite covers both.
///
/// It is made of one protocol per concern (``CredentialStorage``, ``TokenStorage``, ``ExternalIdentityStorage``,
/// ``FactorStorage``, ``OperatorStorage``, ``AuditStorage``, ``OpenIDStorage``), each implemented beside its twin in the
/// PostgreSQL and memory storages and checked by its own conformance suite, and what spans them: the login's one-trip
/// lookup, Profile clean-ups, retention, the outbox.
///
/// Each call is atomic, and every call that changes an account writes the change's events into the outbox in the
/// same transaction (the Notifications relay publishes them later), so no change is ever without its event.
/// Failed-login counts live here too, so every replica on one database sees the same counts.
public protocol IdentityStorage: CredentialStorage, TokenStorage, ExternalIdentityStorage, FactorStorage, OperatorStorage, AuditStorage, OpenIDStorage, OutboxStore {
    // MARK: Across concerns

    /// What a login reads before hashing, in one go: the keys' current counts (as ``failures(keys:at:window:)``), the
    /// account with this normalized userId (as ``credential(normalizedUserId:)``) and whether it has a second factor
    /// that a login must ask for.
    func loginLookup(normalizedUserId: String, keys: [String], at now: Timestamp, window: Duration) async throws(IdentityStorageError) -> LoginLookup

    /// Appends events that go with no change of their own (the mail telling the owner of wrong second-factor answers).
    func appendEvents(_ events: [AccountEvent]) async throws(IdentityStorageError)

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

extension TokenStorage {
    /// A token for the account's userId.
    func createEmailVerification(tokenHash: [UInt8], accountId: String, address: String, expiresAt: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) {
        try await createEmailVerification(tokenHash: tokenHash, codeDigest: nil, accountId: accountId, address: address, isUserId: true, expiresAt: expiresAt, events: events)
    }

    /// A token for `address` without a code.
    func createEmailVerification(tokenHash: [UInt8], accountId: String, address: String, isUserId: Bool, expiresAt: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) {
        try await createEmailVerification(tokenHash: tokenHash, codeDigest: nil, accountId: accountId, address: address, isUserId: isUserId, expiresAt: expiresAt, events: events)
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
