import KontoContracts
import KontoModel
import Logging

extension AccountSecurity {
    /// The caller's account's live sessions, oldest first, the caller's marked `current`; never a token.
    func listSessions(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityAccountSessions {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        let accountId = session.accountId
        let live = try await stored { () async throws(IdentityStorageError) in try await storage.accountSessions(accountId: accountId) } ?? []
        return IdentityAccountSessions(sessions: live.filter { $0.isValid(at: now) }.map { $0.summary(current: $0.id == session.id) })
    }

    /// Ends one session of the caller's account: the caller's own as a logout does; another only as a security-related
    /// operation (a privileged session, or the current password), so a stolen session cannot sign its owner out of
    /// their other devices. Another account's session, or one no longer live, is `account.sessionNotFound`, the same.
    func endSession(_ request: IdentityEndSessionRequest) async throws(ServiceError) -> IdentitySessionsEnded {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        let accountId = session.accountId
        guard request.sessionId.utf8.count <= 64 else { throw Self.sessionNotFound }
        if request.sessionId != session.id {
            let live = try await stored { () async throws(IdentityStorageError) in try await storage.accountSessions(accountId: accountId) } ?? []
            // Only a live session of this account: another account's id is not found here, nor is told apart.
            guard live.contains(where: { $0.id == request.sessionId && $0.isValid(at: now) }) else { throw Self.sessionNotFound }
            try await factors.authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        }
        let written = WrittenEvents()
        let ended = try await sessions.end(sessionId: request.sessionId, of: accountId, at: now, written: written)
        // Ended meanwhile by another call (it expired, or a logout): gone, as asked, but not by this call.
        guard ended else { throw Self.sessionNotFound }
        logger.info("session ended by its owner", metadata: [
            "konto.account_id": "\(accountId)", "konto.session_id": "\(request.sessionId)", "konto.own": "\(request.sessionId == session.id)",
        ])
        return IdentitySessionsEnded(sessionsEnded: 1, accountId: accountId, eventIds: written.ids)
    }

    /// Ends every session of the caller's account but the caller's (security-related), e.g. after a device was lost.
    func endOtherSessions(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentitySessionsEnded {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        try await factors.authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let accountId = session.accountId
        let written = WrittenEvents()
        let ended = try await sessions.endSessions(of: accountId, keeping: session.id, at: now, written: written)
        logger.info("other sessions ended by their owner", metadata: ["konto.account_id": "\(accountId)", "konto.sessions_ended": "\(ended)"])
        return IdentitySessionsEnded(sessionsEnded: ended, accountId: accountId, eventIds: ended > 0 ? written.ids : nil)
    }

    static let sessionNotFound = ServiceError(AccountError(code: .sessionNotFound))
}

extension StoredSession {
    /// The session as its owner's and an operator's lists show it.
    func summary(current: Bool? = nil) -> IdentityAccountSessionSummary {
        IdentityAccountSessionSummary(
            id: id, createdAt: createdAt, lastUsedAt: lastUsedAt, idleExpiresAt: idleExpiresAt, absoluteExpiresAt: absoluteExpiresAt,
            assuranceLevel: assuranceLevel, privilegedUntil: privilegedUntil, signInMethod: signInMethod, clientAddress: clientAddress,
            clientName: clientName, current: current
        )
    }
}
