import KontoContracts
import KontoModel
import Logging

extension IdentityStore {
    /// Sends the link that confirms `address` is the account's (through the courier, `verifyEmail`): a single-use
    /// token, only its hash stored, valid for ``IdentityOptions/emailVerificationLifetime``. Nothing for usernames.
    /// A failure is logged, not thrown: the change that sends it (a sign-up, a new userId) has happened, and the
    /// owner can ask for another link.
    /// `contact`: the address is the account's contact address (the `email` detail, where userIds are usernames).
    func sendEmailVerification(accountId: String, address: String, contact: Bool = false, at now: Timestamp) async {
        let token = SecretToken.generate()
        let expiresAt = now.adding(options.emailVerificationLifetime)
        guard let mail = mailEvent(accountId, to: address, .verifyEmail, secret: token, expiresAt: expiresAt, contact: contact, at: now) else { return }
        do {
            try await storage.createEmailVerification(
                tokenHash: SecretToken.hash(token), accountId: accountId, address: address, isUserId: !contact, expiresAt: expiresAt, events: [mail]
            )
        } catch {
            logger.warning("verification mail not asked for", metadata: ["konto.account_id": "\(accountId)", "konto.error": "\(error)"])
        }
    }

    /// The link a sign-up sends: to the userId where userIds are addresses, else to the `email` detail it stored, if any.
    func sendSignUpVerification(accountId: String, userId: String, stored: ProfileRecord, at now: Timestamp) async {
        if configuration.userIdType == .emailAddress {
            await sendEmailVerification(accountId: accountId, address: userId, at: now)
        } else if case let .string(email)? = stored.details.storedValues[EmailKey.identifier] {
            // Any number of accounts may name one contact address: its links from all of them are counted, and past
            // the hour's allowance the sign-up stands without one (the owner asks later).
            let key = "verify-mail-address:" + Self.digest(email.lowercased())
            do {
                guard try await takeMailAllowance(key, perHour: options.verificationMailsPerAddressPerHour, at: now) == nil else {
                    logger.info("verification mail not sent: the address's allowance is used", metadata: ["konto.account_id": "\(accountId)"])
                    return
                }
            } catch {
                logger.warning("verification mail not asked for", metadata: ["konto.account_id": "\(accountId)", "konto.error": "\(error)"])
                return
            }
            await sendEmailVerification(accountId: accountId, address: email, contact: true, at: now)
        }
    }

    /// Sends the session's account a new verification link: to its userId where userIds are addresses, else to its
    /// `email` detail (Profile's, read now). Nothing when that address is verified already; limited to
    /// ``IdentityOptions/verificationMailsPerHour`` per account and address (`account.throttled` beyond, with when to
    /// try again).
    /// - Throws: `account.notFound` for an account without an address (an anonymous account, a username without an
    ///   `email`); `identity.profileUnavailable` when the `email` cannot be read.
    public func requestEmailVerification(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityDone {
        let now = clock()
        let session = try await validSession(request.token, at: now)
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
        try await takeMailAllowances([
            ("verify-mail:" + Self.digest(accountId + "\u{0}" + address), options.verificationMailsPerHour),
        ] + chosenAddressAllowances(accountId: accountId, address: address), at: now)
        await sendEmailVerification(accountId: accountId, address: address, contact: contact, at: now)
        logger.info("verification mail asked for", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityDone()
    }

    /// Confirms an address with its link's token: once, before it expires, and only while the address is still the
    /// account's userId. `emailVerified`.
    /// - Throws: `account.invalidVerificationToken` otherwise.
    public func confirmEmailVerification(_ request: IdentityConfirmEmailVerificationRequest) async throws(ServiceError) -> IdentityEmailVerified {
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
        if let token = request.session, let session = try? await validSession(token, at: now), session.accountId == accountId {
            keeping = session.id
        }
        _ = try await endAccessBeforeFirstProof(accountId: accountId, keeping: keeping, keepingPassword: keeping != nil, at: now)
        return IdentityEmailVerified(accountId: accountId)
    }

    static let mailAllowanceWindow = Duration.seconds(3_600)

    /// What a mail to an address the account chose counts against: the account's chosen-address mails together, and
    /// the address's verification mails from every account.
    func chosenAddressAllowances(accountId: String, address: String) -> [(key: String, perHour: Int)] {
        [
            ("chosen-mail-account:" + Self.digest(accountId), options.chosenAddressMailsPerAccountPerHour),
            ("verify-mail-address:" + Self.digest(address.lowercased()), options.verificationMailsPerAddressPerHour),
        ]
    }

    /// Takes one from each allowance in order (each check and count one statement); `account.throttled`, with when
    /// one frees up, at the first used up (those before it stay taken: a refused request still counted).
    func takeMailAllowances(_ allowances: [(key: String, perHour: Int)], at now: Timestamp) async throws(ServiceError) {
        for (key, perHour) in allowances {
            guard let used = try await takeMailAllowance(key, perHour: perHour, at: now) else { continue }
            let retryAfter = used.lastFailureAt.map { Int(($0.adding(Self.mailAllowanceWindow).milliseconds - now.milliseconds + 999) / 1_000) } ?? 3_600
            throw .throttled(retryAfterSeconds: max(retryAfter, 1))
        }
    }

    /// Takes one mail from an hourly allowance (counted in the shared failure counts, so every replica sees it): nil
    /// when taken, the count when it is used up (nothing taken).
    func takeMailAllowance(_ key: String, perHour limit: Int, at now: Timestamp) async throws(ServiceError) -> FailureCount? {
        let window = Self.mailAllowanceWindow
        return try await stored { () async throws(IdentityStorageError) in try await storage.takeAllowance(key: key, limit: limit, at: now, window: window) }
    }

    static let invalidVerificationToken = ServiceError(AccountError(code: .invalidVerificationToken))
}
