import KontoContracts
import KontoModel
import Logging

extension AccountMail {
    /// Sends the link that confirms `address` is the account's (through the courier, `verifyEmail`): a single-use
    /// token, only its hash stored, valid for ``IdentityOptions/emailVerificationLifetime``, and beside it a code of
    /// eight digits for the app that holds the account's session (only its keyed digest stored; either uses both up).
    /// A failure is logged, not thrown: the change that sends it (a sign-up, a new userId) has happened, and the
    /// owner can ask for another link.
    /// `contact`: the address is the account's contact address (the `email` detail, where userIds are usernames).
    func sendEmailVerification(accountId: String, address: String, contact: Bool = false, at now: Timestamp) async {
        let token = SecretToken.generate()
        let code = EmailCode.generate()
        let expiresAt = now.adding(options.emailVerificationLifetime)
        guard let mail = mailEvent(accountId, to: address, .verifyEmail, secret: token, code: code, expiresAt: expiresAt, contact: contact, at: now) else { return }
        do {
            try await storage.createEmailVerification(
                tokenHash: SecretToken.hash(token), codeDigest: sessions.factorSecrets.verificationCodeDigest(code, accountId: accountId), accountId: accountId,
                address: address, isUserId: !contact, expiresAt: expiresAt, events: [mail]
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
            let key = "verify-mail-address:" + SessionAuthority.digest(email.lowercased())
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

    static let mailAllowanceWindow = Duration.seconds(3_600)

    /// What a mail to an address the account chose counts against: the account's chosen-address mails together, and
    /// the address's verification mails from every account.
    func chosenAddressAllowances(accountId: String, address: String) -> [(key: String, perHour: Int)] {
        [
            ("chosen-mail-account:" + SessionAuthority.digest(accountId), options.chosenAddressMailsPerAccountPerHour),
            ("verify-mail-address:" + SessionAuthority.digest(address.lowercased()), options.verificationMailsPerAddressPerHour),
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
}
