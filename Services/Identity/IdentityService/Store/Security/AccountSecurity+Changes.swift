import KontoContracts
import KontoModel
import Logging

extension AccountSecurity {
    /// Sets a new password and ends every other session of the account. Needs a privileged session or the current
    /// password.
    func changePassword(_ request: IdentityChangePasswordRequest) async throws(ServiceError) -> IdentitySessionsEnded {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        try checkNewPassword(request.newPassword)
        try await factors.authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let hash = try await sessions.hashing { try await sessions.hashing.hash(request.newPassword.value) }
        let accountId = session.accountId
        let address = await mail.mailAddress(accountId: accountId)
        let written = WrittenEvents()
        let ended = try await stored { () async throws(IdentityStorageError) in
            try await storage.changePassword(accountId: accountId, passwordHash: hash.encoded, keeping: session.id) { ended in
                var events = [self.event(accountId, .passwordChanged, at: now)]
                if ended > 0 {
                    events.append(self.event(accountId, .sessionsRevoked, at: now))
                }
                if let mail = self.mail.mailEvent(accountId, to: address, .passwordChanged, at: now) {
                    events.append(mail)
                }
                return written.record(events)
            }
        }
        logger.info("password changed", metadata: ["konto.account_id": "\(accountId)", "konto.sessions_ended": "\(ended)"])
        return IdentitySessionsEnded(sessionsEnded: ended, eventIds: written.ids)
    }

    /// Gives the account a new userId; the old one no longer logs in, and, as after a password change, every other
    /// session and every reset token of the account ends. Needs a privileged session or the current password.
    /// - Throws: `account.credentialsTaken` when another account has it; `account.throttled` past the account's mails to
    ///   chosen addresses, or the new address's, this hour (nothing changed).
    func changeUserId(_ request: IdentityChangeUserIdRequest) async throws(ServiceError) -> IdentityDone {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        let userId = UserIdNormalization.trimmed(request.userId)
        try checkUserId(userId)
        try await factors.authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let accountId = session.accountId
        let credential = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }
        guard let credential, let previous = credential.userId else {
            throw ServiceError(AccountError(code: .notFound, message: "An anonymous account has no userId; sign up instead."))
        }
        let normalizedUserId = UserIdNormalization.normalized(userId, type: configuration.userIdType)
        // Where userIds are addresses the change mails a chosen address (the link) and the previous one: counted like
        // the account's other chosen-address mails before anything changes, so a session cannot mail any number.
        if configuration.userIdType == .emailAddress {
            try await mail.takeMailAllowances(mail.chosenAddressAllowances(accountId: accountId, address: userId), at: now)
        }
        let written = WrittenEvents()
        let ended = try await stored { () async throws(IdentityStorageError) in
            try await storage.changeUserId(accountId: accountId, userId: userId, normalizedUserId: normalizedUserId, keeping: session.id) { ended in
                var events = [self.event(accountId, .userIdChanged(previous: previous, new: userId), at: now)]
                if ended > 0 {
                    events.append(self.event(accountId, .sessionsRevoked, at: now))
                }
                // To the previous address: whoever owns it learns that it no longer signs in.
                if let mail = self.mail.mailEvent(accountId, to: previous, .emailChanged, at: now) {
                    events.append(mail)
                }
                return written.record(events)
            }
        }
        // The new address is unverified until the link sent to it is opened.
        await mail.sendEmailVerification(accountId: accountId, address: userId, at: now)
        logger.info("userId changed", metadata: ["konto.account_id": "\(accountId)", "konto.sessions_ended": "\(ended)"])
        return IdentityDone(eventIds: written.ids)
    }

    /// Deletes the account: `deletingAccount` is recorded first, then the credentials, sessions and reset tokens go
    /// in the same transaction. Needs a privileged session or the current password.
    ///
    /// The profile goes the one way every deletion takes: Profile consumes the durable `deletingAccount` event
    /// (relayed from the outbox this transaction wrote it to) and deletes idempotently. The same transaction schedules
    /// a repair after ``IdentityOptions/profileCleanupDelay``, should the event not get there (events switched off,
    /// Notifications down for long): the clean-up job's `profile.delete` then finds nothing or removes what is left.
    /// The caller is told the account is gone at once, since it can no longer log in.
    func delete(_ request: IdentityDeleteRequest) async throws(ServiceError) -> IdentityDone {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        try await factors.authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        return try await erase(accountId: session.accountId, at: now)
    }

    /// The one deletion path, the owner's and an operator's: the credentials, sessions, tokens, factors and identities
    /// go with `deletingAccount` in one transaction (its audit entries' personal data with them), the profile's
    /// deletion is scheduled, and the userId's failure count is forgotten.
    /// - Throws: `account.notFound` when there is no such account.
    func erase(accountId: String, at now: Timestamp) async throws(ServiceError) -> IdentityDone {
        let normalizedUserId = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }?.normalizedUserId
        let written = WrittenEvents()
        let deleted = try await stored { () async throws(IdentityStorageError) in
            try await storage.deleteAccount(
                accountId: accountId,
                events: written.record([event(accountId, .deletingAccount, at: now)]),
                profileCleanupAt: now.adding(options.profileCleanupDelay)
            )
        }
        guard deleted else { throw ServiceError(AccountError(code: .notFound)) }
        if let normalizedUserId {
            // The failure count under the userId's digest goes too (it would expire with its window anyway).
            try? await storage.clearFailures(key: sessions.throttleKeys(normalizedUserId: normalizedUserId, clientAddress: nil)[0])
        }
        logger.info("account deleted", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityDone(eventIds: written.ids)
    }
}
