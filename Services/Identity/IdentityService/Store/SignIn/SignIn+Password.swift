import Crypto
import Foundation
import KontoContracts
import KontoModel
import Logging

extension SignIn {
    /// Logs in with userId and password.
    ///
    /// An unknown userId costs one hash against a dummy and answers byte for byte like a wrong password. Failures
    /// count against the userId and the client address in the shared storage; past the policy's threshold further
    /// attempts are refused with `account.throttled` and its retry-after, before any sessions.hashing. A success clears
    /// the userId's count, and rehashes a password stored with weaker parameters than today's.
    ///
    /// With a second factor enrolled, a correct password gives no session but a challenge (``IdentityLoginAnswer``):
    /// the session comes from ``completeSecondFactor(_:)``.
    func login(_ request: IdentityLoginRequest) async throws(ServiceError) -> IdentityLoginAnswer {
        guard PasswordHashingPool.acceptsLength(of: request.password) else { throw Self.passwordTooLong }
        let normalizedUserId = UserIdNormalization.normalized(request.userId, type: configuration.userIdType)
        let clients = sessions.clientHashes(address: request.clientAddress, device: request.clientDevice)
        // [userId, address?, this client's failures at this userId?]
        var keys = sessions.throttleKeys(normalizedUserId: normalizedUserId, clientAddress: request.clientAddress)
        if let client = clients.first {
            keys.append("user-client:" + SessionAuthority.digest(normalizedUserId + "\u{0}" + SessionAuthority.hex(client)))
        }
        let now = clock()
        let lookup = try await stored { () async throws(IdentityStorageError) in
            try await storage.loginLookup(normalizedUserId: normalizedUserId, keys: keys, at: now, window: options.throttle.window)
        }
        let counts = lookup.counts
        let credential = lookup.credential
        let heldUserId = try await sessions.admitSignIn(
            counts, credential: credential, clients: sessions.knownClientCandidates(address: request.clientAddress, device: request.clientDevice), at: now
        )
        let hash = credential?.passwordHash.flatMap(PasswordHash.init(encoded:))
        // A hash costlier than Konto's own (imported, up to PasswordHash.ImportBounds) is counted against the userId
        // before it runs, and only if no other attempt was counted since this one read the count: of a burst of wrong
        // passwords at once, one is verified and the rest are throttled, where each would have held a hashing thread
        // (and, for argon2id, its memory) before any had been counted. A known client let past the userId's count is
        // not held here either.
        let countedBefore = try await countCostlyAttempt(hash: hash, key: keys[0], read: counts[0], heldUserId: heldUserId, at: now)
        let matches = try await sessions.hashing { try await sessions.hashing.verify(request.password.value, against: hash) }
        // A disabled account answers as a wrong password does, counted as one (docs/ADMIN.md): a stranger learns
        // nothing from the refusal, its timing or the throttling that follows.
        guard matches, let credential, let hash, credential.disabledAt == nil else {
            // The reason is the operators' (the audit log); the caller's answer is the same for every one.
            let reason = credential == nil ? "unknownUser" : hash == nil ? "noPassword" : !matches ? "wrongPassword" : "accountDisabled"
            let audit = AuditRecord.failure("signIn.failed", accountId: credential?.accountId, reason: reason, at: now)
            try await stored { () async throws(IdentityStorageError) in
                try await storage.recordFailures(keys: countedBefore ? Array(keys.dropFirst()) : keys, at: now, window: options.throttle.window, audit: [audit])
            }
            throw Self.wrongCredentials
        }
        if countedBefore {
            try await stored { () async throws(IdentityStorageError) in try await storage.clearFailures(key: keys[0]) }
        }
        try await sessions.forgetFailures(keys, counts: counts, heldUserId: heldUserId)
        if sessions.hashing.hasher.needsRehash(hash) {
            await rehash(request.password, of: credential)
        }
        return try await finishSignIn(credential, demandsSecondFactor: lookup.demandsSecondFactor, privileged: true, clients: clients, method: "a password", signInMethod: "password", at: now)
    }

    /// Counts an attempt against `key` (the userId's) before a costly hash runs, if none was counted since `read`;
    /// throttled otherwise (another attempt at the account is being checked). False: not a costly hash, nothing
    /// counted.
    private func countCostlyAttempt(hash: PasswordHash?, key: String, read: FailureCount, heldUserId: Bool, at now: Timestamp) async throws(ServiceError) -> Bool {
        guard let hash, sessions.hashing.hasher.needsRehash(hash), !heldUserId else { return false }
        let refused = try await stored { () async throws(IdentityStorageError) in
            try await storage.takeAllowance(key: key, limit: read.count + 1, at: now, window: options.throttle.window)
        }
        if refused != nil { throw .throttled(retryAfterSeconds: 1) }
        return true
    }

    /// A checked first factor's answer: a second-factor challenge when the account has one (known from the lookup: a
    /// login without one reads nothing more for it), else a session under the credential version that was checked
    /// (should the password or userId have changed since, none is made and the sign-in fails as a wrong password
    /// would), its client remembered as known. `method` names the first factor in the owner's mail ("a password"),
    /// `signInMethod` in the list of sessions (`password`).
    func finishSignIn(
        _ credential: StoredCredential, demandsSecondFactor: Bool, privileged: Bool, clients: [[UInt8]], method: String, signInMethod: String,
        at now: Timestamp
    ) async throws(ServiceError) -> IdentityLoginAnswer {
        let accountId = credential.accountId
        // Every first factor ends here (a password, a mailed code, a provider): a disabled account gets no session
        // nor a second-factor challenge, refused as a wrong credential is.
        guard credential.disabledAt == nil else { throw Self.wrongCredentials }
        if demandsSecondFactor {
            logger.debug("second factor asked for", metadata: ["konto.account_id": "\(accountId)"])
            return IdentityLoginAnswer(challenge: try await factors.secondFactorChallenge(for: credential, at: now))
        }
        let answer = try await signedInDetails(credential)
        let (session, token) = sessions.makeSession(accountId: accountId, credentialVersion: credential.credentialVersion, privileged: privileged, method: signInMethod, at: now)
        do {
            try await storage.createSession(session, events: [event(accountId, .associatedAccount, at: now)])
        } catch where error.code == .notFound {
            throw Self.wrongCredentials
        } catch {
            throw Self.error(for: error)
        }
        // Known from now on (a failure here only means the next lockout may hold this client too).
        await mail.rememberSignIn(accountId: accountId, clients: clients, method: method, at: now)
        logger.debug("logged in", metadata: ["konto.account_id": "\(accountId)", "konto.session_id": "\(session.id)"])
        return IdentityLoginAnswer(accountSession: IdentityAccountSession(
            session: IdentitySession(token: BearerToken(token), expiresAt: session.absoluteExpiresAt), details: answer.details, account: answer.facts
        ))
    }

    /// The details a sign-in answers with (login, second factor, passkey): Profile's record assembled with what the
    /// credential holds. No session without them: Profile unreachable is `identity.profileUnavailable`, and the caller
    /// retries the whole sign-in.
    func signedInDetails(_ credential: StoredCredential) async throws(ServiceError) -> (facts: IdentityAccountFacts, details: AccountDetails) {
        let record: ProfileRecord?
        do {
            record = try await profile.load(accountId: credential.accountId)
        } catch {
            throw .identityProfileUnavailable
        }
        let facts = credential.facts(userIdType: configuration.userIdType)
        return (facts, assembler.account(facts, profile: record).details)
    }

    /// Stores a hash with today's parameters, unless the credential changed since it was read (then the new
    /// password's hash stays); a failure only delays it to the next login.
    func rehash(_ password: SecretString, of credential: StoredCredential) async {
        let accountId = credential.accountId
        do {
            let fresh = try await sessions.hashing.hash(password.value)
            if try await storage.rehashPassword(accountId: accountId, passwordHash: fresh.encoded, credentialVersion: credential.credentialVersion) {
                logger.info("password rehashed with current parameters", metadata: ["konto.account_id": "\(accountId)"])
            }
        } catch {
            logger.warning("password rehash failed", metadata: ["konto.account_id": "\(accountId)"])
        }
    }
}
