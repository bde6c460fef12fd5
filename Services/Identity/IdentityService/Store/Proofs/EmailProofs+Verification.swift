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
    /// account's userId. `emailVerified`.
    /// - Throws: `account.invalidVerificationToken` otherwise.
    func confirmEmailVerification(_ request: IdentityConfirmEmailVerificationRequest) async throws(ServiceError) -> IdentityEmailVerified {
        guard request.token.value.utf8.count <= 256 else { throw Self.invalidVerificationToken }
        let now = clock()
        let tokenHash = SecretToken.hash(request.token.value)
        let accountId = try await stored { () async throws(IdentityStorageError) in
            try await storage.confirmEmailVerification(tokenHash: tokenHash, at: now) { accountId in [self.event(accountId, .emailVerified, at: now)] }
        }
        guard let accountId else { throw Self.invalidVerificationToken }
        logger.info("email address verified", metadata: ["konto.account_id": "\(accountId)"])
        // The account's first proof ends what it gained before (docs/IDENTITY.md, "Pre-hijacked accounts"): a session
        // of the account sent with the link is the confirmer's own, which stays, with the password it was made with.
        var keeping: String?
        if let token = request.session, let session = try? await sessions.validSession(token, at: now), session.accountId == accountId {
            keeping = session.id
        }
        _ = try await endAccessBeforeFirstProof(accountId: accountId, keeping: keeping, keepingPassword: keeping != nil, at: now)
        return IdentityEmailVerified(accountId: accountId)
    }

    static let invalidVerificationToken = ServiceError(AccountError(code: .invalidVerificationToken))
}
