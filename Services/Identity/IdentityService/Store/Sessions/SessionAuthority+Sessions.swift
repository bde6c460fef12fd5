import Foundation
import KontoContracts
import KontoModel
import Logging

extension SessionAuthority {
    /// Who a token belongs to. One indexed lookup; the idle expiry is pushed forward at most once per
    /// ``IdentityOptions/sessionTouchInterval``, so almost every validation only reads.
    /// - Throws: `account.unauthenticated` for an unknown, ended or expired token, the same for each.
    func validateSession(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentitySessionInfo {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        let idleExpiresAt = min(now.adding(options.sessionIdleTimeout), session.absoluteExpiresAt)
        var expiresAt = session.idleExpiresAt
        if idleExpiresAt.milliseconds - session.idleExpiresAt.milliseconds >= options.sessionTouchInterval.milliseconds {
            try await stored { () async throws(IdentityStorageError) in try await storage.touchSession(id: session.id, idleExpiresAt: idleExpiresAt, at: now) }
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
    func logout(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentitySessionsEnded {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        let written = WrittenEvents()
        let ended = try await end(sessionId: session.id, of: session.accountId, at: now, written: written)
        return IdentitySessionsEnded(sessionsEnded: ended ? 1 : 0, eventIds: ended ? written.ids : nil)
    }

    /// Ends one session of the account with its `disassociatingAccount` (for the caches), recorded in `written`; false
    /// (nothing written) when it was gone already. The owner's logout and end of a session, an operator's.
    func end(sessionId: String, of accountId: String, at now: Timestamp, written: WrittenEvents) async throws(ServiceError) -> Bool {
        try await stored { () async throws(IdentityStorageError) in
            try await storage.deleteSession(id: sessionId, events: written.record([event(accountId, .disassociatingAccount, at: now)]))
        }
    }

    /// Ends every session of the account but `keeping`, with `sessionsRevoked` and `disassociatingAccount` recorded in
    /// `written` when any ended; how many. The owner's end of every other session, an operator's end of all.
    func endSessions(of accountId: String, keeping: String?, at now: Timestamp, written: WrittenEvents) async throws(ServiceError) -> Int {
        try await stored { () async throws(IdentityStorageError) in
            try await storage.deleteSessions(accountId: accountId, keeping: keeping) { count in
                count == 0 ? [] : written.record([self.event(accountId, .sessionsRevoked, at: now), self.event(accountId, .disassociatingAccount, at: now)])
            }
        }
    }

    /// Ends every session of the account, the presented one included.
    func logoutEverywhere(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentitySessionsEnded {
        let now = clock()
        let session = try await validSession(request.token, at: now)
        let accountId = session.accountId
        let written = WrittenEvents()
        let ended = try await stored { () async throws(IdentityStorageError) in
            try await storage.deleteSessions(accountId: accountId, keeping: nil) { _ in
                written.record([
                    self.event(accountId, .sessionsRevoked, at: now),
                    self.event(accountId, .disassociatingAccount, at: now),
                ])
            }
        }
        logger.info("every session ended", metadata: ["konto.account_id": "\(accountId)", "konto.sessions_ended": "\(ended)"])
        return IdentitySessionsEnded(sessionsEnded: ended, eventIds: written.ids)
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
            try await recordFailure(keys, at: now, audit: .failure("password.checkFailed", accountId: accountId, reason: "wrongPassword", at: now))
            throw Self.wrongCredentials
        }
    }
}
