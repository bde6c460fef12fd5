import Foundation
import KontoContracts
import KontoModel
import Logging

extension IdentityStore {
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

    /// Completes a login with the second factor: the challenge a correct password gave and a TOTP or recovery code.
    /// The session is `aal2` and privileged for the window.
    /// - Throws: `account.invalidChallenge` (unknown, used or expired), `account.wrongSecondFactor` (a wrong, replayed
    ///   or out-of-window code), `account.throttled` (wrong codes per account, across replicas).
    public func completeSecondFactor(_ request: IdentitySecondFactorRequest) async throws(ServiceError) -> IdentityAccountSession {
        let now = clock()
        guard request.challenge.value.utf8.count <= 256 else { throw Self.invalidChallenge }
        let tokenHash = SecretToken.hash(request.challenge.value)
        // Each answer, right or wrong, takes one of the challenge's few (a wrong code also counts per account below).
        let allowing = options.challengeAnswers
        guard let challenge = try await stored({ () async throws(IdentityStorageError) in
            try await storage.answerChallenge(tokenHash: tokenHash, at: now, allowing: allowing)
        }) else {
            throw Self.invalidChallenge
        }
        let accountId = challenge.accountId
        var remaining: Int?
        if let credential = request.credential {
            guard request.code == nil, request.recoveryCode == nil else { throw Self.oneSecondFactor }
            do {
                _ = try await verifyPasskeyAssertion(credential, for: accountId, challengeAccount: accountId, requireUserVerification: false, at: now)
            } catch where error.code == AccountError.Code.wrongCredentials {
                // The password was right; it is the second factor that was not.
                throw Self.wrongSecondFactor
            }
            try await factorShownRight(accountId)
        } else {
            remaining = try await verifySecondFactor(accountId: accountId, code: request.code, recoveryCode: request.recoveryCode, at: now)
        }
        let credential = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }
        guard let credential, credential.credentialVersion == challenge.credentialVersion else { throw Self.invalidChallenge }
        let signedIn = try await signedInDetails(credential)
        let (session, token) = makeSession(accountId: accountId, credentialVersion: challenge.credentialVersion, privileged: true, assuranceLevel: 2, at: now)
        let completed: Bool
        do {
            completed = try await storage.completeChallenge(tokenHash: tokenHash, at: now, session: session, events: [event(accountId, .associatedAccount, at: now)])
        } catch where error.code == .notFound {
            throw Self.invalidChallenge
        } catch {
            throw Self.error(for: error)
        }
        // Used by a concurrent completion in the meantime: one challenge, one session.
        guard completed else { throw Self.invalidChallenge }
        await rememberSignIn(accountId: accountId, clients: clientHashes(address: request.clientAddress, device: request.clientDevice), method: "a second factor", at: now)
        logger.debug("logged in with a second factor", metadata: ["konto.account_id": "\(accountId)", "konto.session_id": "\(session.id)"])
        return IdentityAccountSession(
            session: IdentitySession(token: BearerToken(token), expiresAt: session.absoluteExpiresAt),
            details: signedIn.details, account: signedIn.facts, recoveryCodesRemaining: remaining
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
            let address = await mailAddress(accountId: accountId)
            for hash in [factorSecrets.recoveryCodeDigest(recoveryCode.value, accountId: accountId), RecoveryCodes.legacyHash(recoveryCode.value)] {
                remaining = try await stored { () async throws(IdentityStorageError) in
                    try await storage.useRecoveryCode(accountId: accountId, codeHash: hash, at: now) { left in
                        [
                            self.event(accountId, .recoveryCodeUsed(remaining: left), at: now),
                            self.mailEvent(accountId, to: address, .recoveryCodeUsed, values: ["remaining": "\(left)"], at: now),
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
        try await factorShownRight(accountId)
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
    private func tellOwnerOfWrongAnswers(_ accountId: String, answers: Int, at now: Timestamp) async {
        let lockAfter = options.secondFactorLockAfter
        let message: MailRequest.Message
        switch answers {
        case options.secondFactorWarnAfter, 2 * lockAfter: message = .secondFactorFailures
        case lockAfter: message = .secondFactorLocked
        default: return
        }
        let address = await mailAddress(accountId: accountId)
        guard let mail = mailEvent(accountId, to: address, message, values: ["failures": "\(answers)"], at: now) else { return }
        do {
            try await storage.appendEvents([mail])
        } catch {
            logger.warning("could not mail the owner about wrong second-factor answers", metadata: ["konto.account_id": "\(accountId)", "konto.error": "\(error)"])
        }
    }

    /// Wrong codes count per account in the shared failures table (every replica sees them), apart from passwords.
    private static func codeThrottleKey(_ accountId: String) -> String {
        "factor:" + digest(accountId)
    }

    /// Refuses a code while the account's wrong codes hold it; the count so far.
    private func checkCodeThrottle(_ accountId: String, at now: Timestamp) async throws(ServiceError) -> FailureCount {
        let policy = options.secondFactorThrottle
        let counts = try await stored { () async throws(IdentityStorageError) in
            try await storage.failures(keys: [Self.codeThrottleKey(accountId)], at: now, window: policy.window)
        }
        if let seconds = policy.retryAfter(counts, at: now) { throw .throttled(retryAfterSeconds: seconds) }
        return counts[0]
    }

    /// Counts a wrong code; the error to answer with.
    private func codeRefused(_ accountId: String, at now: Timestamp) async throws(ServiceError) -> ServiceError {
        let window = options.secondFactorThrottle.window
        try await stored { () async throws(IdentityStorageError) in
            try await storage.recordFailures(keys: [Self.codeThrottleKey(accountId)], at: now, window: window)
        }
        return Self.wrongSecondFactor
    }

    /// A right code forgets the account's wrong ones (only when there are some: most uses write nothing).
    private func codeAccepted(_ accountId: String, failures: FailureCount) async throws(ServiceError) {
        guard failures.count > 0 else { return }
        try await stored { () async throws(IdentityStorageError) in try await storage.clearFailures(key: Self.codeThrottleKey(accountId)) }
    }

    /// Uses the step of a TOTP code with any of the account's confirmed TOTPs; false for a code none accepts now.
    private func useTOTPCode(_ code: String, accountId: String, at now: Timestamp) async throws(ServiceError) -> Bool {
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

    static let oneSecondFactor = ServiceError(AccountError(code: .validationFailed, fields: [
        AccountFieldError(key: "code", code: .missingAccountValue, message: "Give one second factor: a code from the authenticator app, a recovery code, or a passkey."),
    ]))

    static let invalidChallenge = ServiceError(AccountError(code: .invalidChallenge))
    static let factorLocked = ServiceError(AccountError(code: .factorLocked))
    static let factorNotFound = ServiceError(AccountError(code: .factorNotFound))

    /// What a challenge may be answered with.
    static func available(_ factors: [StoredFactor]) -> [String] {
        var available: [String] = []
        if factors.contains(where: { $0.kind == .totp && $0.confirmed }) { available.append("totp") }
        if factors.contains(where: { $0.kind == .passkey && $0.confirmed }) { available.append("passkey") }
        if factors.contains(where: { $0.kind == .recoveryCodes && ($0.remaining ?? 0) > 0 }) { available.append("recoveryCode") }
        return available
    }

    // MARK: Managing factors

    /// The account's factors, pending TOTP enrolments included.
    public func listFactors(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityFactors {
        let session = try await validSession(request.token, at: clock())
        let accountId = session.accountId
        let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        return IdentityFactors(factors: factors.map(Self.answer))
    }

    /// Starts a TOTP enrolment (security-related): the secret and the otpauth URI, shown once. It is not asked for at
    /// login until ``confirmTOTP(_:)`` confirms it with a first code; a new enrolment replaces an unconfirmed one.
    public func enrollTOTP(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentityTOTPEnrolment {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        try await authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let credential = try await signedUpCredential(session.accountId)
        let accountId = session.accountId
        let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        guard factors.filter(\.confirmed).count < options.maximumFactors else { throw Self.tooManyFactors(options.maximumFactors) }
        let secret = TOTPAuthenticator.generateSecret()
        let factorId = UUID().uuidString.lowercased()
        let factor = StoredFactor(
            id: factorId, accountId: accountId, kind: .totp, name: "Authenticator app",
            sealedSecret: factorSecrets.seal(secret, accountId: accountId, factorId: factorId), confirmed: false, createdAt: now
        )
        try await stored { () async throws(IdentityStorageError) in try await storage.addPendingFactor(factor) }
        let authenticator = TOTPAuthenticator(issuer: options.totpIssuer)
        let base32 = TOTPAuthenticator.base32(secret)
        return IdentityTOTPEnrolment(
            factorId: factorId, secret: BearerToken(base32),
            otpauthURI: BearerToken(authenticator.provisioningURI(secret: secret, label: credential.userId ?? accountId))
        )
    }

    /// Confirms a pending TOTP enrolment with a first valid code: from now on a login asks for it. `factorAdded`.
    public func confirmTOTP(_ request: IdentityConfirmFactorRequest) async throws(ServiceError) -> IdentityFactor {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        let accountId = session.accountId
        let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        guard let factor = factors.first(where: { $0.id == request.factorId && $0.kind == .totp && !$0.confirmed }),
              let sealed = factor.sealedSecret, let secret = factorSecrets.open(sealed, accountId: accountId, factorId: factor.id)
        else { throw Self.factorNotFound }
        let failures = try await checkCodeThrottle(accountId, at: now)
        guard request.code.value.utf8.count <= 16, let step = TOTPAuthenticator.matchingStep(of: request.code.value, secret: secret, at: now) else {
            throw try await codeRefused(accountId, at: now)
        }
        let address = await mailAddress(accountId: accountId)
        let confirmed = try await stored { () async throws(IdentityStorageError) in
            try await storage.confirmFactor(
                accountId: accountId, factorId: factor.id, step: step, at: now,
                events: factorEvents(accountId, .factorAdded(factorId: factor.id, factorType: StoredFactor.Kind.totp.rawValue), address: address, at: now)
            )
        }
        guard confirmed else { throw Self.factorNotFound }
        try await codeAccepted(accountId, failures: failures)
        logger.info("second factor added", metadata: ["konto.account_id": "\(accountId)", "konto.factor_type": "totp"])
        var answer = factor
        answer.confirmed = true
        answer.lastUsedAt = now
        return Self.answer(answer)
    }

    /// Removes a factor (security-related; with second factors, an `aal2` window). `factorRemoved` says how many are
    /// left; removing the last is allowed, and the answer says so (0).
    public func removeFactor(_ request: IdentityRemoveFactorRequest) async throws(ServiceError) -> IdentityFactorRemoved {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        try await authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let accountId = session.accountId
        let factorId = request.factorId
        guard factorId.utf8.count <= 64 else { throw Self.factorNotFound }
        let address = await mailAddress(accountId: accountId)
        let removed = try await stored { () async throws(IdentityStorageError) in
            try await storage.removeFactor(accountId: accountId, factorId: factorId) { kind, remaining in
                self.factorEvents(accountId, .factorRemoved(factorId: factorId, factorType: kind.rawValue, remaining: remaining), address: address, at: now)
            }
        }
        guard let left = removed?.remaining else { throw Self.factorNotFound }
        logger.info("second factor removed", metadata: ["konto.account_id": "\(accountId)", "konto.factors_left": "\(left)"])
        return IdentityFactorRemoved(remainingFactors: left)
    }

    /// Ten new recovery codes (security-related), replacing every earlier one; shown once. `factorAdded`.
    public func regenerateRecoveryCodes(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentityRecoveryCodes {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        try await authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let credential = try await signedUpCredential(session.accountId)
        let accountId = session.accountId
        let codes = RecoveryCodes.generate()
        let factor = StoredFactor(id: UUID().uuidString.lowercased(), accountId: accountId, kind: .recoveryCodes, name: "Recovery codes", confirmed: true, createdAt: now)
        try await stored { () async throws(IdentityStorageError) in
            try await storage.replaceRecoveryCodes(
                factor, codeHashes: codes.map { factorSecrets.recoveryCodeDigest($0, accountId: accountId) },
                events: factorEvents(accountId, .factorAdded(factorId: factor.id, factorType: StoredFactor.Kind.recoveryCodes.rawValue), address: credential.userId, at: now)
            )
        }
        logger.info("recovery codes made", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityRecoveryCodes(codes: codes.map(BearerToken.init))
    }

    /// The account's credential, which must have a userId: an anonymous account has no second factors.
    /// A factor's event, and the mail that tells the account's owner of it.
    func factorEvents(_ accountId: String, _ kind: AccountEvent.Kind, address: String?, at now: Timestamp) -> [AccountEvent] {
        let message: MailRequest.Message
        let factorType: String
        switch kind {
        case let .factorAdded(_, type): (message, factorType) = (.factorAdded, type)
        case let .factorRemoved(_, type, _): (message, factorType) = (.factorRemoved, type)
        default: return [event(accountId, kind, at: now)]
        }
        return [event(accountId, kind, at: now), mailEvent(accountId, to: address, message, values: ["factorType": factorType], at: now)].compactMap { $0 }
    }

    func signedUpCredential(_ accountId: String) async throws(ServiceError) -> StoredCredential {
        let credential = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }
        guard let credential, credential.userId != nil else {
            throw ServiceError(AccountError(code: .notFound, message: "An anonymous account has no second factors; sign up first."))
        }
        return credential
    }

    static func tooManyFactors(_ limit: Int) -> ServiceError {
        ServiceError(AccountError(code: .validationFailed, fields: [
            AccountFieldError(key: "factor", code: .valueTooLarge, message: "An account has at most \(limit) second factors; remove one first."),
        ]))
    }

    static func answer(_ factor: StoredFactor) -> IdentityFactor {
        IdentityFactor(
            id: factor.id, type: factor.kind.rawValue, name: factor.name, createdAt: factor.createdAt, lastUsedAt: factor.lastUsedAt,
            pending: !factor.confirmed, remaining: factor.kind == .recoveryCodes ? factor.remaining : nil
        )
    }
}
