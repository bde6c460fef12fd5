import KontoContracts
import KontoModel
import Logging

extension EmailProofs {
    /// After a proof of the account's address (its verification link, a mailed sign-in code, a reset through the
    /// mail), when it is the account's first: what the account gained while its address was unproven is ended
    /// (docs/IDENTITY.md, "Pre-hijacked accounts"). Someone who signed up with another's address (a password, a
    /// session, a factor, a provider's identity) keeps none of it once the address's owner proves the mailbox. Each
    /// thing ended has its event (`sessionsRevoked`, `passwordChanged`, `factorRemoved`, `identityUnlinked`), and the
    /// owner is mailed what was removed. Nothing where userIds are usernames (the userId is no address to prove).
    /// - Parameters:
    ///   - keeping: the session the proof itself signs in with, if any.
    ///   - keepingPassword: the proof sets the password (a reset): that one is the owner's.
    func endAccessBeforeFirstProof(accountId: String, keeping: String? = nil, keepingPassword: Bool, at now: Timestamp) async throws(ServiceError) -> AccessEnded? {
        guard configuration.userIdType == .emailAddress else { return nil }
        let address = await mail.mailAddress(accountId: accountId)
        let ended = try await stored { () async throws(IdentityStorageError) in
            try await storage.endAccessBeforeFirstProof(accountId: accountId, keeping: keeping, keepingPassword: keepingPassword, at: now) { ended in
                var events: [AccountEvent] = []
                if ended.sessions > 0 { events.append(self.event(accountId, .sessionsRevoked, at: now)) }
                if ended.passwordRemoved { events.append(self.event(accountId, .passwordChanged, at: now)) }
                for (index, factor) in ended.factors.enumerated() {
                    let remaining = ended.factors.dropFirst(index + 1).filter { $0.kind != .recoveryCodes }.count
                    events.append(self.event(accountId, .factorRemoved(factorId: factor.id, factorType: factor.kind.rawValue, remaining: remaining), at: now))
                }
                for identity in ended.identities {
                    events.append(self.event(accountId, .identityUnlinked(identityId: identity.id, provider: identity.provider), at: now))
                }
                if !ended.isEmpty, let mail = self.mail.mailEvent(accountId, to: address, .accessSecured, values: ["removed": Self.removedList(ended)], at: now) {
                    events.append(mail)
                }
                return events
            }
        }
        if let ended, !ended.isEmpty {
            logger.warning("first proof of the address ended what the account gained before it", metadata: [
                "konto.account_id": "\(accountId)", "konto.sessions": "\(ended.sessions)", "konto.password_removed": "\(ended.passwordRemoved)",
                "konto.factors": "\(ended.factors.count)", "konto.identities": "\(ended.identities.count)",
                "konto.applications": "\(ended.applications.count)", "konto.mail_restored": "\(ended.mailPreferencesRestored)",
            ])
        }
        return ended
    }

    /// A proof of the address made with a session of the account (the link with the console's session, the code with
    /// the app's): whoever holds both a way into the account and its mailbox is the owner — a squatter has no way to
    /// the mailbox, the owner none into a squatter's account — so whatever the account has was the owner's doing, and
    /// the first proof records itself and ends nothing.
    func recordOwnersProof(accountId: String, at now: Timestamp) async throws(ServiceError) {
        let first = try await stored { () async throws(IdentityStorageError) in try await storage.recordOwnersProof(accountId: accountId, at: now) }
        if first { logger.info("first proof of the address made with the account's session: nothing ended", metadata: ["konto.account_id": "\(accountId)"]) }
    }

    /// What was removed, as the mail lists it ("the password set before, 2 sessions, an authenticator app, sign-in with Apple").
    static func removedList(_ ended: AccessEnded) -> String {
        var parts: [String] = []
        if ended.passwordRemoved { parts.append("the password set before") }
        if ended.sessions > 0 { parts.append(ended.sessions == 1 ? "1 signed-in session" : "\(ended.sessions) signed-in sessions") }
        for factor in ended.factors {
            switch factor.kind {
            case .totp: parts.append("an authenticator app")
            case .passkey: parts.append("a passkey")
            case .recoveryCodes: parts.append("recovery codes")
            }
        }
        for identity in ended.identities { parts.append("sign-in with \(identity.provider)") }
        if !ended.applications.isEmpty {
            parts.append(ended.applications.count == 1 ? "1 application's access" : "\(ended.applications.count) applications' access")
        }
        if ended.mailPreferencesRestored { parts.append("mail settings turned off (new sign-in notices are on again)") }
        return parts.joined(separator: ", ")
    }
}
