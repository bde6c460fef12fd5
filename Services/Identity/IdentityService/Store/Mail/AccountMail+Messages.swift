import KontoContracts
import KontoModel
import Logging

extension AccountMail {
    /// A `mailRequested` event for Notifications' courier, written in the same transaction as the change it tells of;
    /// nil when the account has no address to write to (its userId is a username, or it is anonymous). A secret is
    /// sealed for the courier, as a reset token for its deliverer.
    /// `contact`: `address` is the account's contact address (its `email` detail, where userIds are usernames), not
    /// its userId.
    func mailEvent(
        _ accountId: String, to address: String?, _ message: MailRequest.Message, secret: String? = nil, code: String? = nil, expiresAt: Timestamp? = nil,
        values: [String: String] = [:], contact: Bool = false, at now: Timestamp
    ) -> AccountEvent? {
        guard configuration.userIdType == .emailAddress || contact, let address else { return nil }
        let request = MailRequest(
            message: message, to: address, sealedToken: secret.map { resetTokenSeal.seal($0, accountId: accountId) },
            sealedCode: code.map { resetTokenSeal.seal($0, accountId: accountId) }, expiresAt: expiresAt?.date, values: values
        )
        return event(accountId, .mailRequested(request), at: now)
    }

    /// The address the account's mail goes to: its userId when userIds are email addresses. A failed read sends no
    /// mail rather than failing the change (the change itself is what the caller asked for).
    func mailAddress(accountId: String) async -> String? {
        guard configuration.userIdType == .emailAddress else { return nil }
        return (try? await storage.credential(accountId: accountId))??.userId
    }

    /// A request that mails something to a userId (a reset, a sign-in code): a well-formed userId (refused as such: it
    /// says nothing about which accounts exist), and the client address's requests of this `kind` counted and
    /// throttled like failed logins, so one address cannot spray them. The normalized userId.
    func admitMailRequest(_ kind: String, userId: String, clientAddress: String?, at now: Timestamp) async throws(ServiceError) -> String {
        try checkUserId(userId)
        let normalizedUserId = UserIdNormalization.normalized(userId, type: configuration.userIdType)
        let addressKeys = sessions.throttleKeys(normalizedUserId: normalizedUserId, clientAddress: clientAddress).dropFirst().map { kind + ":" + $0 }
        try await sessions.checkThrottle(addressKeys, at: now)
        try await sessions.recordFailure(addressKeys, at: now)
        return normalizedUserId
    }

    /// The hourly allowance a mail of `kind` to a userId counts against: all unknown clients' together, or a known
    /// client's own (so a stranger's requests never use up the owner's).
    func mailAllowanceKey(_ kind: String, normalizedUserId: String, knownClient: [UInt8]?) -> String {
        guard let knownClient else { return kind + "-mail:" + SessionAuthority.digest(normalizedUserId) }
        return kind + "-mail-client:" + SessionAuthority.digest(normalizedUserId + "\u{0}" + SessionAuthority.hex(knownClient))
    }

    /// Remembers the clients a sign-in came from; when none of them had signed in to the account before, mails the
    /// owner (`newSignIn`, ASVS 5.0 6.3.7) unless the deployment turned it off (`KONTO_IDENTITY_NEW_CLIENT_MAIL`).
    /// The answer comes with the write (no read of its own); a failure only costs the notice.
    func rememberSignIn(accountId: String, clients: [[UInt8]], method: String, at now: Timestamp) async {
        guard let known = try? await storage.rememberClients(accountId: accountId, clients: clients, at: now), !known, options.newClientMail else { return }
        // The owner may have turned this notice off (unread, it goes: a notice too many beats one missed).
        if let optOuts = try? await storage.mailOptOuts(accountId: accountId), optOuts.contains(MailRequest.Message.newSignIn.rawValue) { return }
        do {
            try await notify(accountId, .newSignIn, values: ["method": method], at: now)
        } catch {
            logger.warning("could not mail the owner about a sign-in from a new client", metadata: ["konto.account_id": "\(accountId)", "konto.error": "\(error)"])
        }
    }

    /// Mails the owner a notice that is no part of a change (a sign-in from a new client, wrong second-factor
    /// answers): its event written alone. Nothing where the account has no address to write to.
    /// - Throws: the storage's error; the caller logs it (only the notice is lost).
    func notify(_ accountId: String, _ message: MailRequest.Message, values: [String: String], at now: Timestamp) async throws(IdentityStorageError) {
        let address = await mailAddress(accountId: accountId)
        guard let mail = mailEvent(accountId, to: address, message, values: values, at: now) else { return }
        try await storage.appendEvents([mail])
    }
}
