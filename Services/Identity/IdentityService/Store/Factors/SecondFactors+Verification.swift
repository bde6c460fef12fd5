import Foundation
import KontoContracts
import KontoModel
import Logging

extension SecondFactors {
    // MARK: The login's second step

    /// A correct password's challenge, for an account with a second factor, naming what may answer it.
    func secondFactorChallenge(for credential: StoredCredential, at now: Timestamp) async throws(ServiceError) -> IdentitySecondFactorChallenge {
        let accountId = credential.accountId
        let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        let token = SecretToken.generate()
        let challenge = StoredChallenge(
            tokenHash: SecretToken.hash(token), accountId: accountId, credentialVersion: credential.credentialVersion,
            expiresAt: now.adding(options.challengeLifetime)
        )
        try await stored { () async throws(IdentityStorageError) in try await storage.createChallenge(challenge) }
        let passkeys = factors.filter { $0.kind == .passkey && $0.confirmed }
        return IdentitySecondFactorChallenge(
            token: BearerToken(token), expiresAt: challenge.expiresAt, factors: Self.available(factors),
            passkey: passkeys.isEmpty ? nil : passkeyRequestOptions(for: accountId, allowing: passkeys, expiresAt: challenge.expiresAt)
        )
    }

    /// Checks a TOTP code or a recovery code of the account, each accepted once, wrong ones throttled per account and
    /// counted towards the factor's lock (docs/IDENTITY.md, "Second factor"). Returns the recovery codes left when one
    /// was used, nil for a TOTP code.
    /// - Throws: `account.validationFailed` (neither given, or too long), `account.wrongSecondFactor`, `account.throttled`,
    ///   `account.factorLocked` (a code while the authenticator app is locked; a recovery code still works).
    func verifySecondFactor(accountId: String, code: SecretString?, recoveryCode: SecretString?, at now: Timestamp) async throws(ServiceError) -> Int? {
        guard (code == nil) != (recoveryCode == nil) else { throw Self.oneSecondFactor }
        guard (code?.value.utf8.count ?? 0) <= 16, (recoveryCode?.value.utf8.count ?? 0) <= 64 else {
            throw ServiceError(AccountError(code: .validationFailed, fields: [
                AccountFieldError(key: "code", code: .valueTooLarge, message: "This is not a code."),
            ]))
        }
        let failures = try await checkCodeThrottle(accountId, at: now)
        // Counted before it is checked, in one statement, so concurrent answers each get their own place in the count
        // and none passes the lock together with another; a right answer clears it below.
        guard let answers = try await stored({ () async throws(IdentityStorageError) in try await storage.countFactorAnswer(accountId: accountId) }) else {
            throw Self.invalidChallenge
        }
        let lockAfter = options.secondFactorLockAfter
        if code != nil, answers > lockAfter {
            // Locked: refused unchecked, so not a guess (nor counted against the hour); the owner hears of it once more.
            await tellOwnerOfWrongAnswers(accountId, answers: answers, at: now)
            logger.info("second factor locked", metadata: ["konto.account_id": "\(accountId)", "konto.answers": "\(answers)"])
            throw Self.factorLocked
        }
        var remaining: Int?
        var accepted = false
        if let code {
            accepted = try await useTOTPCode(code.value, accountId: accountId, at: now)
        } else if let recoveryCode {
            // The keyed digest, then the unkeyed one codes made before it were stored as (each code is stored one
            // way only, so it still works once). The owner is told each use, in its transaction.
            let address = await mail.mailAddress(accountId: accountId)
            for hash in [factorSecrets.recoveryCodeDigest(recoveryCode.value, accountId: accountId), RecoveryCodes.legacyHash(recoveryCode.value)] {
                remaining = try await stored { () async throws(IdentityStorageError) in
                    try await storage.useRecoveryCode(accountId: accountId, codeHash: hash, at: now) { left in
                        [
                            self.event(accountId, .recoveryCodeUsed(remaining: left), at: now),
                            self.mail.mailEvent(accountId, to: address, .recoveryCodeUsed, values: ["remaining": "\(left)"], at: now),
                        ].compactMap { $0 }
                    }
                }
                if remaining != nil { break }
            }
            accepted = remaining != nil
        }
        guard accepted else {
            await tellOwnerOfWrongAnswers(accountId, answers: answers, at: now)
            throw try await codeRefused(accountId, at: now)
        }
        // A TOTP step used cleared the wrong answers with it (useFactorStep); a recovery code clears them here.
        if recoveryCode != nil { try await factorShownRight(accountId) }
        try await codeAccepted(accountId, failures: failures)
        return remaining
    }

    /// A right second factor (a code, a recovery code, a passkey): the count of wrong answers starts again, and a
    /// locked authenticator app opens.
    func factorShownRight(_ accountId: String) async throws(ServiceError) {
        try await stored { () async throws(IdentityStorageError) in try await storage.clearFactorAnswers(accountId: accountId) }
    }

    /// Mails the owner at the warning count, at the lock, and once more at twice the lock (someone keeps trying):
    /// at most three mails until the owner recovers, however long the attempts go on. Only exact counts mail, and
    /// each count belongs to one answer, so concurrent answers send each mail once.
    func tellOwnerOfWrongAnswers(_ accountId: String, answers: Int, at now: Timestamp) async {
        let lockAfter = options.secondFactorLockAfter
        let message: MailRequest.Message
        switch answers {
        case options.secondFactorWarnAfter, 2 * lockAfter: message = .secondFactorFailures
        case lockAfter: message = .secondFactorLocked
        default: return
        }
        do {
            try await mail.notify(accountId, message, values: ["failures": "\(answers)"], at: now)
        } catch {
            logger.warning("could not mail the owner about wrong second-factor answers", metadata: ["konto.account_id": "\(accountId)", "konto.error": "\(error)"])
        }
    }

    /// Wrong codes count per account in the shared failures table (every replica sees them), apart from passwords.
    static func codeThrottleKey(_ accountId: String) -> String {
        "factor:" + SessionAuthority.digest(accountId)
    }

    /// Refuses a code while the account's wrong codes hold it; the count so far.
    func checkCodeThrottle(_ accountId: String, at now: Timestamp) async throws(ServiceError) -> FailureCount {
        let policy = options.secondFactorThrottle
        let counts = try await stored { () async throws(IdentityStorageError) in
            try await storage.failures(keys: [Self.codeThrottleKey(accountId)], at: now, window: policy.window)
        }
        if let seconds = policy.retryAfter(counts, at: now) { throw .throttled(retryAfterSeconds: seconds) }
        return counts[0]
    }

    /// Counts a wrong code; the error to answer with.
    func codeRefused(_ accountId: String, at now: Timestamp) async throws(ServiceError) -> ServiceError {
        let window = options.secondFactorThrottle.window
        try await stored { () async throws(IdentityStorageError) in
            try await storage.recordFailures(
                keys: [Self.codeThrottleKey(accountId)], at: now, window: window,
                audit: [.failure("secondFactor.failed", accountId: accountId, reason: "wrongCode", at: now)]
            )
        }
        return Self.wrongSecondFactor
    }

    /// A right code forgets the account's wrong ones (only when there are some: most uses write nothing).
    func codeAccepted(_ accountId: String, failures: FailureCount) async throws(ServiceError) {
        guard failures.count > 0 else { return }
        try await stored { () async throws(IdentityStorageError) in try await storage.clearFailures(key: Self.codeThrottleKey(accountId)) }
    }

    /// Uses the step of a TOTP code with any of the account's confirmed TOTPs; false for a code none accepts now.
    func useTOTPCode(_ code: String, accountId: String, at now: Timestamp) async throws(ServiceError) -> Bool {
        let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        for factor in factors where factor.demandsSecondFactor {
            guard let sealed = factor.sealedSecret, let secret = factorSecrets.open(sealed, accountId: accountId, factorId: factor.id),
                  let step = TOTPAuthenticator.matchingStep(of: code, secret: secret, at: now)
            else { continue }
            // Accepted once: a replay, or a code of a step before the last one used, finds the step used.
            if try await stored({ () async throws(IdentityStorageError) in
                try await storage.useFactorStep(accountId: accountId, factorId: factor.id, step: step, at: now)
            }) {
                return true
            }
        }
        return false
    }

    /// Whether the account has a factor that demands a second factor (and so security-related operations need an
    /// `aal2` privileged window).
    func demandsSecondFactor(_ accountId: String) async throws(ServiceError) -> Bool {
        try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }.contains(where: \.demandsSecondFactor)
    }

    static let factorLocked = ServiceError(AccountError(code: .factorLocked))

    /// What a challenge may be answered with.
    static func available(_ factors: [StoredFactor]) -> [String] {
        var available: [String] = []
        if factors.contains(where: { $0.kind == .totp && $0.confirmed }) { available.append("totp") }
        if factors.contains(where: { $0.kind == .passkey && $0.confirmed }) { available.append("passkey") }
        if factors.contains(where: { $0.kind == .recoveryCodes && ($0.remaining ?? 0) > 0 }) { available.append("recoveryCode") }
        return available
    }
}
