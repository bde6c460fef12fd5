import Foundation
import KontoContracts
import KontoModel
import Logging

extension IdentityStore {
    /// Who a token belongs to. One indexed lookup; the idle expiry is pushed forward at most once per
    /// ``IdentityOptions/sessionTouchInterval``, so almost every validation only reads.
    /// - Throws: `account.unauthenticated` for an unknown, ended or expired token, the same for each.
    public func validateSession(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentitySessionInfo {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        let idleExpiresAt = min(now.adding(options.sessionIdleTimeout), session.absoluteExpiresAt)
        var expiresAt = session.idleExpiresAt
        if idleExpiresAt.milliseconds - session.idleExpiresAt.milliseconds >= options.sessionTouchInterval.milliseconds {
            try await stored { () async throws(IdentityStorageError) in try await storage.touchSession(id: session.id, idleExpiresAt: idleExpiresAt) }
            expiresAt = idleExpiresAt
        }
        return IdentitySessionInfo(
            account: try facts(of: session),
            sessionId: session.id,
            expiresAt: expiresAt,
            privilegedUntil: session.isPrivileged(at: now) ? session.privilegedUntil : nil,
            assuranceLevel: session.assuranceLevel
        )
    }

    /// Ends the presented session.
    public func logout(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentitySessionsEnded {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        let ended = try await stored { () async throws(IdentityStorageError) in
            try await storage.deleteSession(id: session.id, events: [event(session.accountId, .disassociatingAccount, at: now)])
        }
        return IdentitySessionsEnded(sessionsEnded: ended ? 1 : 0)
    }

    /// Ends every session of the account, the presented one included.
    public func logoutEverywhere(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentitySessionsEnded {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        let accountId = session.accountId
        let ended = try await stored { () async throws(IdentityStorageError) in
            try await storage.deleteSessions(accountId: accountId, keeping: nil) { _ in
                [
                    self.event(accountId, .sessionsRevoked, at: now),
                    self.event(accountId, .disassociatingAccount, at: now),
                ]
            }
        }
        logger.info("every session ended", metadata: ["konto.account_id": "\(accountId)", "konto.sessions_ended": "\(ended)"])
        return IdentitySessionsEnded(sessionsEnded: ended)
    }

    /// Enters the password again, a second factor's code, or both: a fresh session, privileged for the window,
    /// replaces the presented one (whose token stops working at once), keeping its expiry. With a code the session is
    /// `aal2` (what security-related operations of an account with second factors need); with the password alone,
    /// `aal1`; with a passkey, `aal2` only where its authenticator verified the user or the password came with it (a
    /// passkey alone, unverified, is one factor: something held).
    /// - Throws: `account.wrongCredentials` (counted like a failed login, or per account for codes),
    ///   `account.throttled`, `account.validationFailed` when nothing is given.
    public func reauthenticate(_ request: IdentityReauthenticateRequest) async throws(ServiceError) -> IdentityPrivilege {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        let secondFactor = request.code != nil || request.recoveryCode != nil || request.credential != nil
        guard request.password != nil || secondFactor else {
            throw ServiceError(AccountError(code: .validationFailed, fields: [
                AccountFieldError(key: PasswordKey.identifier, code: .missingAccountValue, message: "Enter the password, a code or use a passkey."),
            ]))
        }
        if let password = request.password {
            try await verifyPassword(password, accountId: session.accountId, at: now)
        }
        var twoFactors = secondFactor
        if let credential = request.credential {
            guard request.code == nil, request.recoveryCode == nil else { throw Self.oneSecondFactor }
            let (_, userVerified) = try await verifyPasskeyAssertion(credential, for: session.accountId, challengeAccount: nil, requireUserVerification: false, at: now)
            twoFactors = userVerified || request.password != nil
            if twoFactors { try await factorShownRight(session.accountId) }
        } else if secondFactor {
            _ = try await verifySecondFactor(accountId: session.accountId, code: request.code, recoveryCode: request.recoveryCode, at: now)
        }
        let until = now.adding(options.privilegedWindow)
        let token = SecretToken.generate()
        var replacement = session
        replacement.id = UUID().uuidString.lowercased()
        replacement.tokenHash = SecretToken.hash(token)
        replacement.privilegedUntil = until
        replacement.assuranceLevel = twoFactors ? 2 : 1
        try await stored { () async throws(IdentityStorageError) in try await storage.replaceSession(id: session.id, with: replacement) }
        return IdentityPrivilege(
            privilegedUntil: until,
            session: IdentitySession(token: BearerToken(token), expiresAt: replacement.absoluteExpiresAt)
        )
    }

    /// Checks the account's password for a signed-in caller (reauthentication, the current password of a change, a
    /// deletion or a factor), throttled like a login but counted apart from it: under the account's own key for
    /// checks made with one of its sessions, which strangers failing logins at its userId cannot fill, so the owner
    /// is never locked out of these by others; a stolen session guessing is held by that key alone.
    /// - Throws: `account.wrongCredentials` (an anonymous account has no password), `account.throttled`.
    func verifyPassword(_ password: SecretString, accountId: String, at now: Timestamp) async throws(ServiceError) {
        guard PasswordHashingPool.acceptsLength(of: password) else { throw Self.passwordTooLong }
        let credential = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }
        guard let credential, credential.normalizedUserId != nil else { throw Self.wrongCredentials }
        let keys = ["signed-in:" + Self.digest(accountId)]
        try await checkThrottle(keys, at: now)
        let hash = credential.passwordHash.flatMap(PasswordHash.init(encoded:))
        guard try await hashing({ try await hashing.verify(password.value, against: hash) }) else {
            try await recordFailure(keys, at: now)
            throw Self.wrongCredentials
        }
    }

    /// A security-related operation's gate: the session is privileged, or the request carries the right password.
    /// With a second factor enrolled, neither is enough: the privileged window must be `aal2` (opened with the
    /// second factor, at login or by reauthentication).
    /// - Throws: `account.reauthenticationRequired` when neither, `account.wrongCredentials` for a wrong password,
    ///   `account.secondFactorRequired` when the window is not `aal2` and must be.
    func authorizeSecurityOperation(_ session: StoredSession, currentPassword: SecretString?, at now: Timestamp) async throws(ServiceError) {
        // A current password that is given is checked, even within the privileged window: a wrong one is never
        // silently ignored.
        if let currentPassword {
            try await verifyPassword(currentPassword, accountId: session.accountId, at: now)
        }
        if try await demandsSecondFactor(session.accountId) {
            guard session.isPrivileged(at: now), session.assuranceLevel >= 2 else {
                throw ServiceError(AccountError(code: .secondFactorRequired))
            }
            return
        }
        if currentPassword != nil { return }
        guard session.isPrivileged(at: now) else {
            throw ServiceError(AccountError(code: .reauthenticationRequired))
        }
    }
}
