import KontoContracts
import KontoModel
import Logging

extension EmailProofs {
    /// Sends the session's account a new verification link: to its userId where userIds are addresses, else to its
    /// `email` detail (Profile's, read now). Nothing when that address is verified already; limited to
    /// ``IdentityOptions/verificationMailsPerHour`` per account and address (`account.throttled` beyond, with when to
    /// try again).
    /// - Throws: `account.notFound` for an account without an address (an anonymous account, a username without an
    ///   `email`); `identity.profileUnavailable` when the `email` cannot be read.
    func requestEmailVerification(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityDone {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        let accountId = session.accountId
        let credential = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }
        let noAddress = ServiceError(AccountError(code: .notFound, message: "The account has no email address to verify."))
        guard let credential, credential.userId != nil else { throw noAddress }
        let address: String
        let contact = configuration.userIdType != .emailAddress
        if contact {
            let record: ProfileRecord?
            do {
                record = try await profile.load(accountId: accountId)
            } catch {
                throw .identityProfileUnavailable
            }
            guard case let .string(email)? = record?.details.storedValues[EmailKey.identifier] else { throw noAddress }
            guard credential.verifiedEmail?.lowercased() != email.lowercased() else { return IdentityDone() }
            address = email
        } else {
            guard credential.emailVerifiedAt == nil, let userId = credential.userId else { return IdentityDone() }
            address = userId
        }
        try await mail.takeMailAllowances([
            ("verify-mail:" + SessionAuthority.digest(accountId + "\u{0}" + address), options.verificationMailsPerHour),
        ] + mail.chosenAddressAllowances(accountId: accountId, address: address), at: now)
        await mail.sendEmailVerification(accountId: accountId, address: address, contact: contact, at: now)
        logger.info("verification mail asked for", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityDone()
    }

    /// Confirms an address with its link's token: once, before it expires, and only while the address is still the
    /// account's userId. `emailVerified`. With a session, only a token of the session's account is taken and the
    /// proof is the owner's (nothing ends); without one, the account's first proof ends what it gained before
    /// (docs/IDENTITY.md, "Pre-hijacked accounts").
    /// - Throws: `account.unauthenticated` for a session that is not valid (the token stays unused);
    ///   `account.invalidVerificationToken` for a wrong, used or expired token, or another account's.
    func confirmEmailVerification(_ request: IdentityConfirmEmailVerificationRequest) async throws(ServiceError) -> IdentityEmailVerified {
        let now = clock()
        // A session sent and not valid (ended, expired, made up) is refused before the token is looked at: taken for
        // none, it would turn the owner's confirmation into the squatter's eviction, password and sessions gone.
        var sessionAccountId: String?
        if let token = request.session { sessionAccountId = try await sessions.validSession(token, at: now).accountId }
        guard request.token.value.utf8.count <= 256 else { throw Self.invalidVerificationToken }
        let tokenHash = SecretToken.hash(request.token.value)
        let accountId = try await stored { () async throws(IdentityStorageError) in
            try await storage.confirmEmailVerification(tokenHash: tokenHash, accountId: sessionAccountId, at: now) { accountId in
                [self.event(accountId, .emailVerified, at: now)]
            }
        }
        guard let accountId else { throw Self.invalidVerificationToken }
        logger.info("email address verified", metadata: ["konto.account_id": "\(accountId)"])
        if sessionAccountId != nil {
            try await recordOwnersProof(accountId: accountId, at: now)
        } else {
            _ = try await endAccessBeforeFirstProof(accountId: accountId, keepingPassword: false, at: now)
        }
        return IdentityEmailVerified(accountId: accountId)
    }

    /// Confirms the session's account's address with the code its verification mail carried (typed into the app that
    /// signed up): once, before it expires, only while the address is still the account's. A proof with the account's
    /// session, so nothing ends when it is the first (as the link with that session).
    /// Each well-formed attempt is counted before the code is checked (``IdentityOptions/verificationCodeAttemptsPerHour``
    /// per account), so concurrent guesses cannot pass the allowance together.
    /// - Throws: `account.unauthenticated` without a valid session; `account.validationFailed` for a code that is not
    ///   eight digits (not counted); `account.throttled` past the allowance; `account.invalidVerificationToken` for a
    ///   wrong, used or expired code.
    func confirmEmailVerificationCode(_ request: IdentityConfirmEmailVerificationCodeRequest) async throws(ServiceError) -> IdentityEmailVerified {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        guard EmailCode.isWellFormed(request.code.value) else { throw Self.malformedVerificationCode }
        let accountId = session.accountId
        try await mail.takeMailAllowances([("verify-code:" + SessionAuthority.digest(accountId), options.verificationCodeAttemptsPerHour)], at: now)
        let digest = factorSecrets.verificationCodeDigest(request.code.value, accountId: accountId)
        let verified = try await stored { () async throws(IdentityStorageError) in
            try await storage.confirmEmailVerification(accountId: accountId, codeDigest: digest, at: now, events: [self.event(accountId, .emailVerified, at: now)])
        }
        guard verified else { throw Self.invalidVerificationToken }
        logger.info("email address verified", metadata: ["konto.account_id": "\(accountId)"])
        try await recordOwnersProof(accountId: accountId, at: now)
        return IdentityEmailVerified(accountId: accountId)
    }

    static let invalidVerificationToken = ServiceError(AccountError(code: .invalidVerificationToken))

    static let malformedVerificationCode = ServiceError(AccountError(code: .validationFailed, fields: [
        AccountFieldError(key: "code", code: .credentialNotAccepted, message: "Enter the \(EmailCode.digits) digits from the mail."),
    ]))
}
