import KontoModel
import KontoRuntime
import Synchronization

/// Keeps Identity's records in process memory, for the dev stack and unit tests; gone when the process ends.
/// One lock over everything makes each call atomic, as a transaction would.
public final class InMemoryIdentityStorage: IdentityStorage {
    struct EmailVerification {
        var codeDigest: [UInt8]? = nil
        var accountId: String
        var address: String
        var isUserId: Bool
        var expiresAt: Timestamp
    }

    struct EmailCode {
        var accountId: String
        var credentialVersion: Int64
        var expiresAt: Timestamp
    }

    struct ResetToken {
        var accountId: String
        var expiresAt: Timestamp
    }

    struct OpenIDCode {
        var code: StoredAuthorizationCode
        /// Nil once its session ended.
        var sessionId: String?
        var usedAt: Timestamp?
        var grantId: String?
    }

    struct RefreshToken {
        var grantId: String
        var expiresAt: Timestamp
        var used = false
    }

    struct Revocation {
        var revocation: StoredRevocation
        var nextAttemptAt: Timestamp
        var dead = false
    }

    struct State {
        var credentials: [String: StoredCredential] = [:]
        /// accountId → the optional mails turned off (gone with the credential).
        var mailOptOuts: [String: Set<String>] = [:]
        var accountByUserId: [String: String] = [:]
        var sessions: [String: StoredSession] = [:]
        var sessionByTokenHash: [[UInt8]: String] = [:]
        var failures: [String: FailureCount] = [:]
        var resetTokens: [[UInt8]: ResetToken] = [:]
        var emailVerifications: [[UInt8]: EmailVerification] = [:]
        /// Sign-in codes by digest (a digest is bound to its account, so two accounts' codes never share one).
        var emailCodes: [[UInt8]: EmailCode] = [:]
        /// accountId → client hash → its last successful sign-in.
        var knownClients: [String: [[UInt8]: Timestamp]] = [:]
        /// accountId → when its profile may be deleted.
        var profileCleanups: [String: Timestamp] = [:]
        /// factorId → the factor.
        var factors: [String: StoredFactor] = [:]
        /// Recovery codes' factorId → code hash → when it was used (nil: unused).
        var recoveryCodes: [String: [[UInt8]: Timestamp?]] = [:]
        var challenges: [[UInt8]: StoredChallenge] = [:]
        /// Login challenges' token hashes → answers taken.
        var challengeAnswers: [[UInt8]: Int] = [:]
        /// accountId → consecutive second-factor answers not shown right.
        var factorAnswers: [String: Int] = [:]
        /// Used passkey challenges' hashes, until they expire.
        var usedPasskeyChallenges: [[UInt8]: Timestamp] = [:]
        /// identityId → a linked external identity.
        var externalIdentities: [String: StoredExternalIdentity] = [:]
        /// Used ID tokens' nonce digests, until the tokens expire.
        var usedNonces: [[UInt8]: Timestamp] = [:]
        /// accountId → when its address was first proven (``IdentityStorage/endAccessBeforeFirstProof(accountId:keeping:keepingPassword:at:events:)``).
        var provenAt: [String: Timestamp] = [:]
        /// Operator keys by id.
        var operatorKeys: [String: StoredOperatorKey] = [:]
        /// OpenID Provider authorization codes by hash, with their use.
        var oidcCodes: [[UInt8]: OpenIDCode] = [:]
        /// OpenID Provider grants by id.
        var oidcGrants: [String: StoredOpenIDGrant] = [:]
        /// Refresh tokens by hash.
        var refreshTokens: [[UInt8]: RefreshToken] = [:]
        /// accountId → clientId → the owner's consent.
        var oidcConsents: [String: [String: StoredOpenIDConsent]] = [:]
        /// OpenID Provider clients registered through the admin API, by id.
        var oidcClients: [String: StoredOpenIDClient] = [:]
        /// Provider tokens to revoke (the accounts are deleted), by id.
        var revocations: [String: Revocation] = [:]
        /// Every change appends its events here; their audit entries are appended with them (as PostgreSQL's storage
        /// writes both in one transaction: here, under the one lock).
        var outbox: [AccountEvent] = [] {
            didSet {
                if outbox.count > oldValue.count {
                    appendAudit(AuditRecord.records(for: Array(outbox[oldValue.count...])))
                    outboxChanged.notify()
                }
            }
        }
        /// The audit log in insertion order (sealed ones carry their position and hash).
        var audit: [StoredAuditEntry] = []
        var auditSequence: Int64 = 0
        var auditChain = AuditChainState.empty
        let outboxChanged: Wakeup

        mutating func appendAudit(_ records: [AuditRecord]) {
            for record in records {
                auditSequence += 1
                audit.append(StoredAuditEntry(sequence: auditSequence, record: record))
            }
        }

        /// A deleted account's personal data leaves its audit entries; an operator's calls (`admin.*`) keep theirs, the
        /// operator's address.
        mutating func eraseAudit(accountId: String) {
            for index in audit.indices where audit[index].record.accountId == accountId && !audit[index].record.type.hasPrefix("admin.") {
                audit[index].record.personalText = nil
            }
        }

        mutating func removeSession(_ id: String) -> Bool {
            guard let session = sessions.removeValue(forKey: id) else { return false }
            sessionByTokenHash[session.tokenHash] = nil
            // As PostgreSQL's ON DELETE SET NULL: grants outlive the session they came through.
            for grant in oidcGrants.values where grant.sessionId == id {
                oidcGrants[grant.id]?.sessionId = nil
            }
            for (hash, code) in oidcCodes where code.sessionId == id {
                oidcCodes[hash]?.sessionId = nil
            }
            return true
        }

        mutating func removeSessions(accountId: String, keeping: String?) -> Int {
            let ids = sessions.values.filter { $0.accountId == accountId && $0.id != keeping }.map(\.id)
            for id in ids {
                _ = removeSession(id)
            }
            return ids.count
        }

        mutating func removeCredential(_ accountId: String) -> StoredCredential? {
            guard let credential = credentials.removeValue(forKey: accountId) else { return nil }
            knownClients[accountId] = nil
            mailOptOuts[accountId] = nil
            factorAnswers[accountId] = nil
            for factor in factors.values where factor.accountId == accountId {
                factors[factor.id] = nil
                recoveryCodes[factor.id] = nil
            }
            challenges = challenges.filter { $0.value.accountId != accountId }
            challengeAnswers = challengeAnswers.filter { challenges[$0.key] != nil }
            emailVerifications = emailVerifications.filter { $0.value.accountId != accountId }
            emailCodes = emailCodes.filter { $0.value.accountId != accountId }
            externalIdentities = externalIdentities.filter { $0.value.accountId != accountId }
            oidcCodes = oidcCodes.filter { $0.value.code.accountId != accountId }
            for grant in oidcGrants.values where grant.accountId == accountId {
                removeGrant(grant.id)
            }
            oidcConsents[accountId] = nil
            if let userId = credential.normalizedUserId {
                accountByUserId[userId] = nil
            }
            return credential
        }

        func active(_ accountId: String) -> StoredCredential? {
            guard let credential = credentials[accountId], !credential.isPending else { return nil }
            return credential
        }

        mutating func insert(_ session: StoredSession) {
            sessions[session.id] = session
            sessionByTokenHash[session.tokenHash] = session.id
        }

        /// A credential change: the version is raised, every session but `keeping` ends (that one moves to the new
        /// version) and every reset token of the account goes. Returns how many sessions ended.
        mutating func credentialChanged(_ accountId: String, keeping: String?) -> Int {
            credentials[accountId]?.credentialVersion += 1
            let version = credentials[accountId]?.credentialVersion ?? 0
            let ended = removeSessions(accountId: accountId, keeping: keeping)
            if let keeping, sessions[keeping]?.accountId == accountId {
                sessions[keeping]?.credentialVersion = version
            }
            resetTokens = resetTokens.filter { $0.value.accountId != accountId }
            emailCodes = emailCodes.filter { $0.value.accountId != accountId }
            return ended
        }
    }

    let state: Mutex<State>
    private let outboxChanged = Wakeup()

    public init() {
        self.state = Mutex(State(outboxChanged: outboxChanged))
    }

    public func reserveAccount(_ credential: StoredCredential) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            if let userId = credential.normalizedUserId, state.accountByUserId[userId] != nil {
                throw IdentityStorageError(.conflict)
            }
            var pending = credential
            pending.isPending = true
            state.credentials[credential.accountId] = pending
            if let userId = credential.normalizedUserId {
                state.accountByUserId[userId] = credential.accountId
            }
        }
    }

    public func activateAccount(accountId: String, session: StoredSession?, events: [AccountEvent]) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.credentials[accountId]?.isPending == true else { throw IdentityStorageError(.notFound) }
            state.credentials[accountId]?.isPending = false
            if let session { state.insert(session) }
            state.outbox += events
        }
    }

    public func abandonAccount(accountId: String, profileCleanupAt: Timestamp?) {
        state.withLock { state in
            guard state.credentials[accountId]?.isPending == true else { return }
            _ = state.removeCredential(accountId)
            if let profileCleanupAt {
                state.profileCleanups[accountId] = profileCleanupAt
            }
        }
    }

    public func createAnonymousAccount(_ credential: StoredCredential, session: StoredSession, events: [AccountEvent]) {
        state.withLock { state in
            state.credentials[credential.accountId] = credential
            state.insert(session)
            state.outbox += events
        }
    }

    public func credential(accountId: String) -> StoredCredential? {
        state.withLock { $0.active(accountId) }
    }

    public func credential(normalizedUserId: String) -> StoredCredential? {
        state.withLock { state in state.accountByUserId[normalizedUserId].flatMap { state.active($0) } }
    }

    public func upgradeAnonymous(
        accountId: String,
        userId: String,
        normalizedUserId: String,
        passwordHash: String?,
        session: StoredSession,
        events: [AccountEvent]
    ) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard var credential = state.active(accountId), credential.isAnonymous,
                  session.credentialVersion == credential.credentialVersion + 1
            else { throw IdentityStorageError(.notFound) }
            guard state.accountByUserId[normalizedUserId] == nil else { throw IdentityStorageError(.conflict) }
            credential.userId = userId
            credential.normalizedUserId = normalizedUserId
            credential.passwordHash = passwordHash
            state.credentials[accountId] = credential
            state.accountByUserId[normalizedUserId] = accountId
            _ = state.credentialChanged(accountId, keeping: nil)
            state.insert(session)
            state.outbox += events
        }
    }

    public func changePassword(
        accountId: String,
        passwordHash: String,
        keeping: String?,
        events: @escaping @Sendable (Int) -> [AccountEvent]
    ) throws(IdentityStorageError) -> Int {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.active(accountId) != nil else { throw IdentityStorageError(.notFound) }
            state.credentials[accountId]?.passwordHash = passwordHash
            let ended = state.credentialChanged(accountId, keeping: keeping)
            state.outbox += events(ended)
            return ended
        }
    }

    public func rehashPassword(accountId: String, passwordHash: String, credentialVersion: Int64) -> Bool {
        state.withLock { state in
            guard state.active(accountId)?.credentialVersion == credentialVersion else { return false }
            state.credentials[accountId]?.passwordHash = passwordHash
            return true
        }
    }

    public func changeUserId(
        accountId: String,
        userId: String,
        normalizedUserId: String,
        keeping: String?,
        events: @escaping @Sendable (Int) -> [AccountEvent]
    ) throws(IdentityStorageError) -> Int {
        try state.withLock { state throws(IdentityStorageError) in
            guard var credential = state.active(accountId) else { throw IdentityStorageError(.notFound) }
            if let owner = state.accountByUserId[normalizedUserId], owner != accountId {
                throw IdentityStorageError(.conflict)
            }
            if let previous = credential.normalizedUserId {
                state.accountByUserId[previous] = nil
            }
            credential.userId = userId
            credential.normalizedUserId = normalizedUserId
            // A new address is unverified; links sent to the previous one verify nothing. An account proven before
            // stays proven.
            if let verified = credential.emailVerifiedAt, state.provenAt[accountId] == nil { state.provenAt[accountId] = verified }
            credential.emailVerifiedAt = nil
            state.credentials[accountId] = credential
            state.emailVerifications = state.emailVerifications.filter { $0.value.accountId != accountId }
            state.accountByUserId[normalizedUserId] = accountId
            let ended = state.credentialChanged(accountId, keeping: keeping)
            state.outbox += events(ended)
            return ended
        }
    }

    public func deleteAccount(accountId: String, events: [AccountEvent], profileCleanupAt: Timestamp) -> Bool {
        state.withLock { state in
            guard state.active(accountId) != nil else { return false }
            state.outbox += events
            state.eraseAudit(accountId: accountId)
            // The provider tokens kept for revocation outlive the account until they are revoked.
            for identity in state.externalIdentities.values where identity.accountId == accountId {
                guard let sealed = identity.sealedRefreshToken else { continue }
                let revocation = StoredRevocation(id: identity.id, provider: identity.provider, accountId: accountId, identityId: identity.id, sealedToken: sealed)
                state.revocations[revocation.id] = Revocation(revocation: revocation, nextAttemptAt: Timestamp(milliseconds: 0))
            }
            _ = state.removeCredential(accountId)
            _ = state.removeSessions(accountId: accountId, keeping: nil)
            state.resetTokens = state.resetTokens.filter { $0.value.accountId != accountId }
            state.profileCleanups[accountId] = profileCleanupAt
            return true
        }
    }

    public func createSession(_ session: StoredSession, events: [AccountEvent]) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.active(session.accountId)?.credentialVersion == session.credentialVersion else {
                throw IdentityStorageError(.notFound)
            }
            state.insert(session)
            state.outbox += events
        }
    }

    public func replaceSession(id: String, with replacement: StoredSession) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard let current = state.sessions[id], current.accountId == replacement.accountId,
                  state.active(current.accountId)?.credentialVersion == current.credentialVersion,
                  replacement.credentialVersion == current.credentialVersion
            else { throw IdentityStorageError(.notFound) }
            _ = state.removeSession(id)
            var replacement = replacement
            replacement.signInMethod = replacement.signInMethod ?? current.signInMethod
            replacement.clientAddress = replacement.clientAddress ?? current.clientAddress
            replacement.clientName = replacement.clientName ?? current.clientName
            state.insert(replacement)
        }
    }

    public func session(tokenHash: [UInt8]) -> StoredSession? {
        state.withLock { state in
            guard var session = state.sessionByTokenHash[tokenHash].flatMap({ state.sessions[$0] }),
                  let credential = state.active(session.accountId), credential.credentialVersion == session.credentialVersion,
                  credential.disabledAt == nil
            else { return nil }
            var account = credential
            account.passwordHash = nil
            session.account = account
            // As PostgreSQL's lookup reads it: what validation needs, and how it was signed in (an ID token's amr).
            session.lastUsedAt = nil
            session.clientAddress = nil
            session.clientName = nil
            return session
        }
    }

    public func mailOptOuts(accountId: String) -> Set<String>? {
        state.withLock { state in state.active(accountId).map { _ in state.mailOptOuts[accountId] ?? [] } }
    }

    public func setMailOptOuts(accountId: String, _ optOuts: Set<String>, audit: [AuditRecord]) -> Bool {
        state.withLock { state in
            guard state.active(accountId) != nil else { return false }
            state.mailOptOuts[accountId] = optOuts.isEmpty ? nil : optOuts
            state.appendAudit(audit)
            return true
        }
    }

    public func touchSession(id: String, idleExpiresAt: Timestamp, at now: Timestamp) {
        state.withLock { state in
            guard let session = state.sessions[id] else { return }
            state.sessions[id]?.idleExpiresAt = min(max(session.idleExpiresAt, idleExpiresAt), session.absoluteExpiresAt)
            state.sessions[id]?.lastUsedAt = max(session.lastUsedAt ?? session.createdAt, now)
        }
    }

    public func deleteSession(id: String, events: [AccountEvent]) -> Bool {
        state.withLock { state in
            guard state.removeSession(id) else { return false }
            state.outbox += events
            return true
        }
    }

    public func deleteSessions(accountId: String, keeping: String?, events: @escaping @Sendable (Int) -> [AccountEvent]) -> Int {
        state.withLock { state in
            let ended = state.removeSessions(accountId: accountId, keeping: keeping)
            if keeping == nil {
                for grant in state.oidcGrants.values where grant.accountId == accountId {
                    _ = state.removeGrant(grant.id)
                }
            }
            state.outbox += events(ended)
            return ended
        }
    }

    public func recordFailures(keys: [String], at now: Timestamp, window: Duration, audit: [AuditRecord]) {
        state.withLock { state in
            state.appendAudit(audit)
            for key in keys {
                var count = Self.current(state.failures[key], at: now, window: window)
                count.count += 1
                count.lastFailureAt = now
                state.failures[key] = count
            }
        }
    }

    public func takeAllowance(key: String, limit: Int, at now: Timestamp, window: Duration) -> FailureCount? {
        state.withLock { state in
            var count = Self.current(state.failures[key], at: now, window: window)
            guard count.count < limit else { return count }
            count.count += 1
            count.lastFailureAt = now
            state.failures[key] = count
            return nil
        }
    }

    public func failures(keys: [String], at now: Timestamp, window: Duration) -> [FailureCount] {
        state.withLock { state in keys.map { Self.current(state.failures[$0], at: now, window: window) } }
    }

    public func clearFailures(key: String) {
        state.withLock { _ = $0.failures.removeValue(forKey: key) }
    }

    @discardableResult
    public func rememberClients(accountId: String, clients: [[UInt8]], at now: Timestamp) -> Bool {
        state.withLock { state in
            guard state.active(accountId) != nil, !clients.isEmpty else { return true }
            let known = clients.contains { state.knownClients[accountId]?[$0] != nil }
            for client in clients { state.knownClients[accountId, default: [:]][client] = max(now, state.knownClients[accountId]?[client] ?? now) }
            return known
        }
    }

    public func pruneKnownClients(before cutoff: Timestamp) -> Int {
        state.withLock { state in
            var pruned = 0
            for (accountId, clients) in state.knownClients {
                let kept = clients.filter { $0.value >= cutoff }
                pruned += clients.count - kept.count
                state.knownClients[accountId] = kept.isEmpty ? nil : kept
            }
            return pruned
        }
    }

    public func isKnownClient(accountId: String, clients: [[UInt8]], since: Timestamp) -> Bool {
        state.withLock { state in
            clients.contains { client in state.knownClients[accountId]?[client].map { $0 >= since } ?? false }
        }
    }

    public func pruneFailures(before cutoff: Timestamp) -> Int {
        state.withLock { state in
            let stale = state.failures.filter { ($0.value.lastFailureAt ?? cutoff) < cutoff }.map(\.key)
            for key in stale {
                state.failures[key] = nil
            }
            return stale.count
        }
    }

    public func createResetToken(tokenHash: [UInt8], accountId: String, expiresAt: Timestamp, events: [AccountEvent]) throws(IdentityStorageError) {
        try state.withLock { state throws(IdentityStorageError) in
            guard state.active(accountId) != nil else { throw IdentityStorageError(.notFound) }
            state.resetTokens[tokenHash] = ResetToken(accountId: accountId, expiresAt: expiresAt)
            state.outbox += events
        }
    }

    public func resetTokenAccount(tokenHash: [UInt8], at now: Timestamp) -> String? {
        state.withLock { state in
            guard let token = state.resetTokens[tokenHash], now < token.expiresAt, state.active(token.accountId) != nil else { return nil }
            return token.accountId
        }
    }

    public func confirmPasswordReset(
        tokenHash: [UInt8],
        at now: Timestamp,
        passwordHash: String,
        events: @escaping @Sendable (String, Int) -> [AccountEvent]
    ) -> ConfirmedPasswordReset? {
        state.withLock { state in
            guard let token = state.resetTokens.removeValue(forKey: tokenHash), now < token.expiresAt,
                  state.active(token.accountId) != nil
            else { return nil }
            state.credentials[token.accountId]?.passwordHash = passwordHash
            state.factorAnswers[token.accountId] = nil
            let ended = state.credentialChanged(token.accountId, keeping: nil)
            state.outbox += events(token.accountId, ended)
            return ConfirmedPasswordReset(accountId: token.accountId, sessionsEnded: ended)
        }
    }

    public func dueProfileCleanups(at now: Timestamp, limit: Int) -> [String] {
        state.withLock { state in
            state.profileCleanups.filter { $0.value <= now }.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.prefix(limit).map(\.key)
        }
    }

    public func finishProfileCleanup(accountId: String) {
        state.withLock { _ = $0.profileCleanups.removeValue(forKey: accountId) }
    }

    public func postponeProfileCleanup(accountId: String, until: Timestamp) {
        state.withLock { state in
            guard state.profileCleanups[accountId] != nil else { return }
            state.profileCleanups[accountId] = until
        }
    }

    public func abandonStaleReservations(before cutoff: Timestamp, profileCleanupAt: Timestamp) -> Int {
        state.withLock { state in
            let stale = state.credentials.values.filter { $0.isPending && $0.createdAt < cutoff }.map(\.accountId)
            for accountId in stale {
                _ = state.removeCredential(accountId)
                state.profileCleanups[accountId] = profileCleanupAt
            }
            return stale.count
        }
    }

    public func pruneExpired(
        at now: Timestamp,
        profileCleanupAt: Timestamp,
        limit: Int,
        events: @escaping @Sendable (_ accountId: String) -> [AccountEvent]
    ) -> PrunedRecords {
        state.withLock { state in
            var pruned = PrunedRecords()
            for session in state.sessions.values.filter({ $0.idleExpiresAt <= now || $0.absoluteExpiresAt <= now }).prefix(limit) {
                _ = state.removeSession(session.id)
                pruned.sessions += 1
            }
            // Expired challenges go with expired tokens (not counted: nothing outlives its expiry).
            state.challenges = state.challenges.filter { $0.value.expiresAt > now }
            state.challengeAnswers = state.challengeAnswers.filter { state.challenges[$0.key] != nil }
            state.usedPasskeyChallenges = state.usedPasskeyChallenges.filter { $0.value > now }
            let tokens = state.resetTokens.filter { $0.value.expiresAt <= now }.map(\.key).prefix(limit)
            for token in tokens { state.resetTokens[token] = nil }
            state.emailVerifications = state.emailVerifications.filter { $0.value.expiresAt > now }
            state.emailCodes = state.emailCodes.filter { $0.value.expiresAt > now }
            state.usedNonces = state.usedNonces.filter { $0.value > now }
            pruned.resetTokens = tokens.count
            state.pruneOpenID(at: now, limit: limit)
            let withSessions = Set(state.sessions.values.map(\.accountId))
            let anonymous = state.credentials.values
                .filter { $0.userId == nil && !$0.isPending && !withSessions.contains($0.accountId) }
                .map(\.accountId)
                .prefix(limit)
            for accountId in anonymous {
                _ = state.removeCredential(accountId)
                state.profileCleanups[accountId] = profileCleanupAt
                state.outbox += events(accountId)
                state.eraseAudit(accountId: accountId)
            }
            pruned.anonymousAccounts = anonymous.count
            return pruned
        }
    }

    public func pendingEvents(limit: Int) -> [AccountEvent] {
        state.withLock { Array($0.outbox.prefix(limit)) }
    }

    public func checkHealth() {}

    // MARK: Outbox

    public func drainOutbox(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int {
        let events = state.withLock { Array($0.outbox.prefix(limit)) }
        guard !events.isEmpty else { return 0 }
        try await publish(events)
        // Only this process drains, and appends go to the end: the published events are still the first ones.
        state.withLock { $0.outbox.removeFirst(events.count) }
        return events.count
    }

    public func watchOutbox(_ changed: @escaping @Sendable () -> Void) async throws {
        while !Task.isCancelled {
            let generation = outboxChanged.generation
            await outboxChanged.wait(after: generation, timeout: .seconds(60))
            changed()
        }
    }

    /// A key's count as of `now`: failures whose last one is older than `window` are forgotten.
    private static func current(_ stored: FailureCount?, at now: Timestamp, window: Duration) -> FailureCount {
        guard let stored, let last = stored.lastFailureAt else { return .none }
        guard now.milliseconds - last.milliseconds < window.milliseconds else { return .none }
        return stored
    }
}
