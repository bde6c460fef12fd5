import KontoContracts
import KontoModel
import Logging

extension EmailProofs {
    /// Mails a sign-in code to an account's userId, where the deployment offers sign-in by code
    /// (``IdentityOptions/emailCodeLogin``).
    ///
    /// The answer is the same whether or not the account exists, and so is its timing: after the request's own checks
    /// (a well-formed userId, the client address's allowance) it answers, and the account is looked up, the code made
    /// and its mail asked for afterwards (``pendingWork``). The mails are limited as reset mails are: all unknown
    /// clients together get ``IdentityOptions/emailCodeMailsPerHour``, and so does each client that signed in before.
    /// A newer code does not end an older one: a stranger asking cannot spoil the code the owner is typing.
    /// - Throws: `account.notFound` where sign-in by code is off; the userId's field errors; `account.throttled` for
    ///   a client address asking too often.
    func requestEmailCode(_ request: IdentityEmailCodeRequest) async throws(ServiceError) -> IdentityDone {
        guard options.emailCodeLogin else { throw Self.emailCodeLoginOff }
        let now = clock()
        let normalizedUserId = try await mail.admitMailRequest("email-code", userId: request.userId, clientAddress: request.clientAddress, at: now)
        let clients = sessions.knownClientCandidates(address: request.clientAddress, device: request.clientDevice)
        pendingWork.run {
            await self.mailEmailCode(normalizedUserId: normalizedUserId, clients: clients, at: now)
        }
        return IdentityDone()
    }

    /// The part of a code request nobody waits for: failures are logged (the owner asks again).
    func mailEmailCode(normalizedUserId: String, clients: [[UInt8]], at now: Timestamp) async {
        do {
            guard configuration.userIdType == .emailAddress,
                  let credential = try await storage.credential(normalizedUserId: normalizedUserId), let address = credential.userId,
                  // A disabled account is mailed nothing: the answer was the same already.
                  credential.disabledAt == nil
            else { return }
            let accountId = credential.accountId
            let known = try await storage.isKnownClient(accountId: accountId, clients: clients, since: now.adding(.zero - options.knownClientAge))
            let allowance = mail.mailAllowanceKey("code", normalizedUserId: normalizedUserId, knownClient: known ? clients.first : nil)
            if try await mail.takeMailAllowance(allowance, perHour: options.emailCodeMailsPerHour, at: now) != nil {
                logger.info("sign-in code not sent: allowance used", metadata: ["konto.account_id": "\(accountId)", "konto.known_client": "\(known)"])
                return
            }
            let code = EmailCode.generate()
            let expiresAt = now.adding(options.emailCodeLifetime)
            guard let mail = mail.mailEvent(accountId, to: address, .signInCode, secret: code, expiresAt: expiresAt, at: now) else { return }
            try await storage.createEmailCode(
                accountId: accountId, codeDigest: factorSecrets.emailCodeDigest(code, accountId: accountId),
                credentialVersion: credential.credentialVersion, expiresAt: expiresAt, events: [mail]
            )
            logger.info("sign-in code mailed", metadata: ["konto.account_id": "\(accountId)"])
        } catch {
            logger.warning("sign-in code not mailed", metadata: ["konto.error": "\(error)"])
        }
    }

    /// Signs in with a mailed code: the first factor, as a password is. A wrong, used or expired code and an unknown
    /// userId answer the same `account.wrongCredentials` after the same statements, and count as failed logins (the
    /// userId's code attempts, the client address's, this client's at this userId), held as logins are: a known
    /// client is not held by strangers' guesses. A used code ends the account's other codes and verifies the address
    /// it reached; should Profile be unreachable for the answer, the code works again. With a second factor the answer
    /// is its challenge. The session is not privileged: a mailbox is
    /// not the password, so security-related steps still ask for it (or a second factor).
    /// - Throws: `account.notFound` where sign-in by code is off; `account.validationFailed` for a code that is not 8
    ///   digits or an over-long userId (no guess counted); `account.throttled`; `account.wrongCredentials`.
    func emailCodeLogin(_ request: IdentityEmailCodeLoginRequest) async throws(ServiceError) -> IdentityLoginAnswer {
        guard options.emailCodeLogin else { throw Self.emailCodeLoginOff }
        guard UserIdNormalization.acceptsLength(of: request.userId) else {
            throw ServiceError(AccountError(code: .validationFailed, fields: [UserIdNormalization.tooLongField]))
        }
        guard EmailCode.isWellFormed(request.code.value) else { throw Self.malformedEmailCode }
        let now = clock()
        let normalizedUserId = UserIdNormalization.normalized(request.userId, type: configuration.userIdType)
        let clients = sessions.clientHashes(address: request.clientAddress, device: request.clientDevice)
        // [the userId's code attempts, the address's (shared with password logins), this client's at this userId?]
        var keys = ["code-user:" + SessionAuthority.digest(normalizedUserId)]
        keys += sessions.throttleKeys(normalizedUserId: normalizedUserId, clientAddress: request.clientAddress).dropFirst()
        if let client = clients.first {
            keys.append("code-user-client:" + SessionAuthority.digest(normalizedUserId + "\u{0}" + SessionAuthority.hex(client)))
        }
        let lookup = try await stored { () async throws(IdentityStorageError) in
            try await storage.loginLookup(normalizedUserId: normalizedUserId, keys: keys, at: now, window: options.throttle.window)
        }
        let heldUserId = try await sessions.admitSignIn(
            lookup.counts, credential: lookup.credential, clients: sessions.knownClientCandidates(address: request.clientAddress, device: request.clientDevice), at: now
        )
        // Tried for an unknown userId too (under an accountId no account has), so both answers take the same statements.
        let accountId = configuration.userIdType == .emailAddress ? lookup.credential?.accountId ?? "" : ""
        let digest = factorSecrets.emailCodeDigest(request.code.value, accountId: accountId)
        let used = try await stored { () async throws(IdentityStorageError) in
            try await storage.useEmailCode(accountId: accountId, codeDigest: digest, at: now) { newlyVerified in
                newlyVerified ? [self.event(accountId, .emailVerified, at: now)] : []
            }
        }
        guard let credential = lookup.credential, let used, used.credentialVersion == credential.credentialVersion, credential.disabledAt == nil else {
            let reason = lookup.credential == nil ? "unknownUser" : lookup.credential?.disabledAt != nil ? "accountDisabled" : "wrongCode"
            try await sessions.recordFailure(keys, at: now, audit: .failure("signIn.failed", accountId: lookup.credential?.accountId, reason: reason, at: now))
            throw Self.wrongCredentials
        }
        try await sessions.forgetFailures(keys, counts: lookup.counts, heldUserId: heldUserId)
        var verified = credential
        verified.emailVerifiedAt = verified.emailVerifiedAt ?? now
        var demandsSecondFactor = lookup.demandsSecondFactor
        // A code proves the mailbox: the account's first proof ends what it gained before, the password too (the
        // owner chooses one); the session this sign-in makes comes after, under the credential as it is then.
        if try await endAccessBeforeFirstProof(accountId: accountId, keepingPassword: false, at: now) != nil,
           let current = try await stored({ () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }) {
            verified = current
            verified.emailVerifiedAt = verified.emailVerifiedAt ?? now
            demandsSecondFactor = false
        }
        do {
            let answer = try await signIn.finishSignIn(verified, demandsSecondFactor: demandsSecondFactor, privileged: false, clients: clients, method: "a code sent by mail", signInMethod: "emailCode", at: now)
            logger.info("signed in with a mailed code", metadata: ["konto.account_id": "\(accountId)"])
            return answer
        } catch where error.code == .identityProfileUnavailable {
            // Not the owner's fault: the code works again (until it would have expired), so a retry needs no new mail.
            try? await storage.createEmailCode(accountId: accountId, codeDigest: digest, credentialVersion: used.credentialVersion, expiresAt: used.expiresAt, events: [])
            throw error
        }
    }

    static let emailCodeLoginOff = ServiceError(AccountError(code: .notFound, message: "Sign-in by emailed code is not offered here."))

    static let malformedEmailCode = ServiceError(AccountError(code: .validationFailed, fields: [
        AccountFieldError(key: "code", code: .credentialNotAccepted, message: "Enter the \(EmailCode.digits) digits from the mail."),
    ]))
}
