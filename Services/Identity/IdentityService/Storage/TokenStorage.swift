import KontoEvents
import KontoContracts
import KontoModel

/// The codes and tokens Identity mails: password reset tokens, address verification links, sign-in codes, and what a
/// first proof of the address ends. Only their hashes or digests are stored.
/// Part of ``IdentityStorage``; the same rules hold (each call atomic, every change with its events in the outbox).
public protocol TokenStorage: Sendable {
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

    /// Stores a verification token's hash for `address` (single use, until `expiresAt`), with the mail's event, and the
    /// digest of the code the mail carries beside the link (either uses both up). `isUserId`: the address is the
    /// account's userId (else its contact address, the `email` detail Profile holds, where userIds are usernames).
    /// - Throws: `notFound` when the account is gone, or (`isUserId`) `address` is not its userId any more.
    func createEmailVerification(
        tokenHash: [UInt8], codeDigest: [UInt8]?, accountId: String, address: String, isUserId: Bool, expiresAt: Timestamp, events: [AccountEvent]
    ) async throws(IdentityStorageError)

    /// The account's verification links not used yet (their addresses and expiries, never their tokens' hashes),
    /// soonest to expire first; expired ones not yet pruned are left out.
    func pendingEmailVerifications(accountId: String, at now: Timestamp) async throws(IdentityStorageError) -> [IdentityAccountExport.PendingVerification]

    /// Uses a verification token: when it exists and has not expired at `now`, it is removed and, with `events`, in
    /// one transaction: a userId's address is marked verified at `now` if it is still the account's userId; a contact
    /// address becomes the account's ``StoredCredential/verifiedEmail``. The account's id; nil otherwise (an expired
    /// token or one for a former userId is removed too: it works at most once). With `accountId`, only a token of that
    /// account is used: another account's stays as it was, and the answer is nil.
    func confirmEmailVerification(
        tokenHash: [UInt8], accountId: String?, at now: Timestamp, events: @escaping @Sendable (_ accountId: String) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> String?

    /// Uses a verification by the code its mail carried, for `accountId` only, as ``confirmEmailVerification(tokenHash:at:events:)``
    /// uses one by its token (the link goes with it). True when the address is verified now.
    func confirmEmailVerification(accountId: String, codeDigest: [UInt8], at now: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool

    /// An operator's word that the userId's address is the owner's: verified at `now` and, if it never was, proven
    /// (no later first proof ends access then), with `events` in the same transaction. False when the account is not
    /// there, has no userId, or its address is verified already (nothing written).
    func verifyAddress(accountId: String, at now: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) -> Bool

    /// The account's first proof of its address (docs/IDENTITY.md, "Pre-hijacked accounts"), called right after the
    /// proof: when the account was never proven before (no proof recorded, and its address not verified when it was
    /// made, as a provider's vouching does), records it as proven and, in the same transaction, ends what it gained while
    /// unproven: every session but `keeping`, the password unless `keepingPassword`, every factor and every linked
    /// identity (a provider token kept for one revoked as an unlink does). The credential's version is raised, so a
    /// sign-in that checked the old state leaves no session. Nil when the account was proven before (or is gone).
    func endAccessBeforeFirstProof(
        accountId: String, keeping: String?, keepingPassword: Bool, at now: Timestamp, events: @escaping @Sendable (AccessEnded) -> [AccountEvent]
    ) async throws(IdentityStorageError) -> AccessEnded?

    /// The owner's first proof: the address proven together with a way into the account (a session of it). Records
    /// the account as proven when it never was (as ``endAccessBeforeFirstProof(accountId:keeping:keepingPassword:at:events:)``
    /// decides that) and ends nothing. True when this was the first proof.
    func recordOwnersProof(accountId: String, at now: Timestamp) async throws(IdentityStorageError) -> Bool

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
}
