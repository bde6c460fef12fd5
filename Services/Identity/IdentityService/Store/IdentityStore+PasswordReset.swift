import KontoContracts
import KontoModel
import Logging

extension IdentityStore {
    /// Starts a password reset: for an existing account, a single-use token (only its hash stored) and the
    /// `passwordResetRequested` event a mail sender acts on. The answer is the same whether or not the account exists.
    /// Requests count against the client address like failed logins, so the endpoint cannot be used to flood mail.
    public func requestPasswordReset(_ request: IdentityPasswordResetRequest) async throws(IdentityError) -> IdentityDone {
        // A malformed userId is refused as such (it says nothing about which accounts exist).
        try checkUserId(request.userId)
        let now = clock()
        let normalizedUserId = UserIdNormalization.normalized(request.userId, type: configuration.userIdType)
        let keys = throttleKeys(normalizedUserId: normalizedUserId, clientAddress: request.clientAddress).map { "reset:" + $0 }
        try await checkThrottle(keys, at: now)
        try await recordFailure(keys, at: now)
        let credential = try await stored { () async throws(IdentityStorageError) in
            try await storage.credential(normalizedUserId: normalizedUserId)
        }
        guard let credential, let userId = credential.userId else {
            return IdentityDone()
        }
        let token = SecretToken.generate()
        let expiresAt = now.adding(options.resetTokenLifetime)
        let accountId = credential.accountId
        try await stored { () async throws(IdentityStorageError) in
            try await storage.createResetToken(
                tokenHash: SecretToken.hash(token),
                accountId: accountId,
                expiresAt: expiresAt,
                events: [event(accountId, .passwordResetRequested(userId: userId, token: token, expiresAt: expiresAt.date), at: now)]
            )
        }
        logger.info("password reset requested", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityDone()
    }

    /// Sets a new password with a reset token: once, before it expires. Every session of the account ends.
    /// - Throws: `account.invalidResetToken` for an unknown, used or expired token; the password's field errors
    ///   (checked first, so a weak password does not use the token up).
    public func confirmPasswordReset(_ request: IdentityConfirmPasswordResetRequest) async throws(IdentityError) -> IdentitySessionsEnded {
        guard request.token.value.utf8.count <= 256 else { throw Self.invalidResetToken }
        try checkNewPassword(request.newPassword)
        let now = clock()
        let tokenHash = SecretToken.hash(request.token.value)
        // A made-up token costs a lookup, not a hash (the confirmation below is what uses the token, atomically).
        guard try await stored({ () async throws(IdentityStorageError) in try await storage.resetTokenAccount(tokenHash: tokenHash, at: now) }) != nil else {
            throw Self.invalidResetToken
        }
        let hash = try await hashing { try await hashing.hash(request.newPassword.value) }
        let confirmed = try await stored { () async throws(IdentityStorageError) in
            try await storage.confirmPasswordReset(tokenHash: tokenHash, at: now, passwordHash: hash.encoded) { accountId, sessionsEnded in
                var events = [self.event(accountId, .passwordChanged, at: now)]
                if sessionsEnded > 0 {
                    events.append(self.event(accountId, .sessionsRevoked, at: now))
                }
                return events
            }
        }
        guard let confirmed else { throw Self.invalidResetToken }
        let accountId = confirmed.accountId
        if let credential = try? await storage.credential(accountId: accountId), let normalizedUserId = credential.normalizedUserId {
            // The owner proved control of the account: failed logins against it are forgiven.
            try? await storage.clearFailures(key: throttleKeys(normalizedUserId: normalizedUserId, clientAddress: nil)[0])
        }
        logger.info("password reset", metadata: ["konto.account_id": "\(accountId)"])
        return IdentitySessionsEnded(sessionsEnded: confirmed.sessionsEnded, accountId: accountId)
    }

    static let invalidResetToken = IdentityError(AccountError(code: .invalidResetToken))
}
