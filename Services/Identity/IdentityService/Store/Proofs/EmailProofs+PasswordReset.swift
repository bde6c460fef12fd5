import KontoContracts
import KontoModel
import Logging

extension EmailProofs {
    /// Starts a password reset: for an existing account, a single-use token (only its hash stored) and the
    /// `passwordResetRequested` event a mail sender acts on. The answer is the same whether or not the account exists.
    ///
    /// Requests count against the client address like failed logins (one address cannot spray resets). A userId's
    /// own requests are never refused, so no stranger can stop its owner from resetting; instead the mails are
    /// limited: ``IdentityOptions/resetMailsPerHour`` for all unknown clients together (a mailbox cannot be
    /// flooded), and as many again for each client that signed in to the account before (the owner's requests are
    /// not used up by a stranger's). A request past its allowance is answered the same and sends nothing.
    func requestPasswordReset(_ request: IdentityPasswordResetRequest) async throws(ServiceError) -> IdentityDone {
        // A malformed userId is refused as such (it says nothing about which accounts exist).
        let now = clock()
        let normalizedUserId = try await mail.admitMailRequest("reset", userId: request.userId, clientAddress: request.clientAddress, at: now)
        let credential = try await stored { () async throws(IdentityStorageError) in
            try await storage.credential(normalizedUserId: normalizedUserId)
        }
        // A disabled account is mailed no reset (the answer is the same as for an unknown userId).
        guard let credential, let userId = credential.userId, credential.disabledAt == nil else {
            return IdentityDone()
        }
        let clients = sessions.knownClientCandidates(address: request.clientAddress, device: request.clientDevice)
        let known = try await stored { () async throws(IdentityStorageError) in
            try await storage.isKnownClient(accountId: credential.accountId, clients: clients, since: now.adding(.zero - options.knownClientAge))
        }
        let allowance = mail.mailAllowanceKey("reset", normalizedUserId: normalizedUserId, knownClient: known ? clients.first : nil)
        if try await mail.takeMailAllowance(allowance, perHour: options.resetMailsPerHour, at: now) != nil {
            logger.info("password reset not sent: allowance used", metadata: ["konto.account_id": "\(credential.accountId)", "konto.known_client": "\(known)"])
            return IdentityDone()
        }
        try await createReset(accountId: credential.accountId, userId: userId, at: now)
        return IdentityDone()
    }

    /// A reset an operator asked for (docs/ADMIN.md): the same token and mail as the owner's own request, within an
    /// hourly allowance of its own (``IdentityOptions/resetMailsPerHour``), so a key cannot flood a mailbox; refused
    /// openly, as an operator knows the account: `account.notFound`, `admin.invalidRequest` for an account with no
    /// address to mail or a disabled one, `account.throttled` past the allowance.
    func sendPasswordReset(accountId: String, at now: Timestamp) async throws(ServiceError) -> IdentityDone {
        guard let credential = try await stored({ () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }) else {
            throw ServiceError(AccountError(code: .notFound))
        }
        guard configuration.userIdType == .emailAddress, let userId = credential.userId, let normalizedUserId = credential.normalizedUserId else {
            throw Operators.invalid("The account has no address to mail a reset to.")
        }
        guard credential.disabledAt == nil else { throw Operators.invalid("A disabled account is mailed no reset: enable it first.") }
        let allowance = mail.mailAllowanceKey("reset-operator", normalizedUserId: normalizedUserId, knownClient: nil)
        try await mail.takeMailAllowances([(allowance, options.resetMailsPerHour)], at: now)
        try await createReset(accountId: accountId, userId: userId, at: now)
        return IdentityDone()
    }

    /// A reset token (its hash stored) with `passwordResetRequested` and the mail to `userId`.
    private func createReset(accountId: String, userId: String, at now: Timestamp) async throws(ServiceError) {
        let token = SecretToken.generate()
        let expiresAt = now.adding(options.resetTokenLifetime)
        try await stored { () async throws(IdentityStorageError) in
            try await storage.createResetToken(
                tokenHash: SecretToken.hash(token),
                accountId: accountId,
                expiresAt: expiresAt,
                events: [
                    event(accountId, .passwordResetRequested(userId: userId, token: mail.resetTokenSeal.seal(token, accountId: accountId), expiresAt: expiresAt.date), at: now),
                    mail.mailEvent(accountId, to: userId, .passwordReset, secret: token, expiresAt: expiresAt, at: now),
                ].compactMap { $0 }
            )
        }
        logger.info("password reset requested", metadata: ["konto.account_id": "\(accountId)"])
    }

    /// Sets a new password with a reset token: once, before it expires. Every session of the account ends.
    /// - Throws: `account.invalidResetToken` for an unknown, used or expired token; the password's field errors
    ///   (checked first, so a weak password does not use the token up).
    func confirmPasswordReset(_ request: IdentityConfirmPasswordResetRequest) async throws(ServiceError) -> IdentitySessionsEnded {
        guard request.token.value.utf8.count <= 256 else { throw Self.invalidResetToken }
        try checkNewPassword(request.newPassword)
        let now = clock()
        let tokenHash = SecretToken.hash(request.token.value)
        // A made-up token costs a lookup, not a hash (the confirmation below is what uses the token, atomically).
        guard let tokenAccount = try await stored({ () async throws(IdentityStorageError) in try await storage.resetTokenAccount(tokenHash: tokenHash, at: now) }) else {
            throw Self.invalidResetToken
        }
        let address = await mail.mailAddress(accountId: tokenAccount)
        let hash = try await sessions.hashing { try await sessions.hashing.hash(request.newPassword.value) }
        let written = WrittenEvents()
        let confirmed = try await stored { () async throws(IdentityStorageError) in
            try await storage.confirmPasswordReset(tokenHash: tokenHash, at: now, passwordHash: hash.encoded) { accountId, sessionsEnded in
                var events = [self.event(accountId, .passwordChanged, at: now)]
                if sessionsEnded > 0 {
                    events.append(self.event(accountId, .sessionsRevoked, at: now))
                }
                // The token named this account when the address was read (a token is the account's alone).
                if accountId == tokenAccount, let mail = self.mail.mailEvent(accountId, to: address, .passwordChanged, at: now) {
                    events.append(mail)
                }
                return written.record(events)
            }
        }
        guard let confirmed else { throw Self.invalidResetToken }
        let accountId = confirmed.accountId
        if let credential = try? await storage.credential(accountId: accountId), let normalizedUserId = credential.normalizedUserId {
            // The owner proved control of the account: failed logins against it are forgiven.
            try? await storage.clearFailures(key: sessions.throttleKeys(normalizedUserId: normalizedUserId, clientAddress: nil)[0])
        }
        // A reset link reaches only the mailbox's owner: the account's first proof ends what it gained before
        // (docs/IDENTITY.md, "Pre-hijacked accounts"), but the password this reset set. The reset is done either way; a
        // failure here leaves the account unproven, so the next proof ends it.
        if accountId == tokenAccount {
            do {
                _ = try await endAccessBeforeFirstProof(accountId: accountId, keepingPassword: true, at: now)
            } catch {
                logger.error("first proof by a reset not finished", metadata: ["konto.account_id": "\(accountId)", "konto.error": "\(error.code)"])
            }
        }
        logger.info("password reset", metadata: ["konto.account_id": "\(accountId)"])
        return IdentitySessionsEnded(sessionsEnded: confirmed.sessionsEnded, accountId: accountId, eventIds: written.ids)
    }

    static let invalidResetToken = ServiceError(AccountError(code: .invalidResetToken))
}
