import KontoEvents
import KontoModel

/// Second factors (TOTP, recovery codes, passkeys), the login challenges that ask for them, and the hard stop on wrong
/// answers.
/// Part of ``IdentityStorage``; the same rules hold (each call atomic, every change with its events in the outbox).
public protocol FactorStorage: Sendable {
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
    /// earlier one after it), atomically, so two concurrent uses of one code cannot both succeed. A step used is a right
    /// answer: the account's count of wrong ones (``countFactorAnswer(accountId:)``) goes with it, in the same write.
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

    // MARK: The second factor's hard stop

    /// Counts an answer of the account's second factor before it is checked, in one statement, so concurrent answers
    /// each get their own place in the count: the consecutive answers not shown right since the last right one, this
    /// one included (past the lock, an answer is refused unchecked). Nil when the account is gone.
    func countFactorAnswer(accountId: String) async throws(IdentityStorageError) -> Int?

    /// The consecutive answers not shown right (0 when none).
    func factorAnswers(accountId: String) async throws(IdentityStorageError) -> Int

    /// A right answer, a recovery or a password reset: the count starts again (and a locked factor is open).
    func clearFactorAnswers(accountId: String) async throws(IdentityStorageError)
}
