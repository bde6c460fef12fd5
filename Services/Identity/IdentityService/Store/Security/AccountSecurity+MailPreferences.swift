import KontoContracts
import KontoModel
import Logging

extension AccountSecurity {
    /// The optional mails, by their ``MailRequest/Message`` name: only notices the owner can do without. The security
    /// notices are never among them.
    static let optionalMails: Set<String> = [MailRequest.Message.newSignIn.rawValue]

    /// The caller's mail preferences.
    func mailPreferences(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityMailPreferences {
        let session = try await sessions.validSession(request.token, at: clock())
        let accountId = session.accountId
        let optOuts = try await stored { () async throws(IdentityStorageError) in try await storage.mailOptOuts(accountId: accountId) }
        guard let optOuts else { throw ServiceError(AccountError(code: .unauthenticated)) }
        return Self.preferences(optOuts)
    }

    /// Changes them. Turning a notice off is security-related: a stolen session must not silence the notice of its own
    /// sign-ins from new clients; turning one on is not. Audited (`mail.preferencesChanged`) with the change.
    func setMailPreferences(_ request: IdentitySetMailPreferencesRequest) async throws(ServiceError) -> IdentityMailPreferences {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        let accountId = session.accountId
        guard let current = try await stored({ () async throws(IdentityStorageError) in try await storage.mailOptOuts(accountId: accountId) }) else {
            throw ServiceError(AccountError(code: .unauthenticated))
        }
        var optOuts = current
        if let newSignIn = request.newSignIn {
            if newSignIn { optOuts.remove(MailRequest.Message.newSignIn.rawValue) } else { optOuts.insert(MailRequest.Message.newSignIn.rawValue) }
        }
        guard optOuts != current else {
            // Nothing changes: a given password is still checked (never silently ignored), nothing is written.
            if let password = request.currentPassword { try await sessions.verifyPassword(password, accountId: accountId, at: now) }
            return Self.preferences(current)
        }
        if !optOuts.subtracting(current).isEmpty {
            try await factors.authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        } else if let password = request.currentPassword {
            try await sessions.verifyPassword(password, accountId: accountId, at: now)
        }
        let scope = AuditScope.current
        let (actorType, actorId) = scope?.actor(changing: accountId) ?? (.account, accountId)
        let audit = AuditRecord(
            occurredAt: now, accountId: accountId, actorType: actorType, actorId: actorId, type: "mail.preferencesChanged", operation: scope?.operation,
            facts: ["newSignIn": optOuts.contains(MailRequest.Message.newSignIn.rawValue) ? "off" : "on"], personal: scope?.personal
        )
        let changed = try await stored { () async throws(IdentityStorageError) in try await storage.setMailOptOuts(accountId: accountId, optOuts, audit: [audit]) }
        guard changed else { throw ServiceError(AccountError(code: .unauthenticated)) }
        logger.info("mail preferences changed", metadata: ["konto.account_id": "\(accountId)"])
        return Self.preferences(optOuts)
    }

    static func preferences(_ optOuts: Set<String>) -> IdentityMailPreferences {
        IdentityMailPreferences(newSignIn: !optOuts.contains(MailRequest.Message.newSignIn.rawValue))
    }
}
