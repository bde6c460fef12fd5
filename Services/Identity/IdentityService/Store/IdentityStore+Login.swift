import Crypto
import Foundation
import KontoContracts
import KontoModel
import Logging

extension IdentityStore {
    /// Logs in with userId and password.
    ///
    /// An unknown userId costs one hash against a dummy and answers byte for byte like a wrong password. Failures
    /// count against the userId and the client address in the shared storage; past the policy's threshold further
    /// attempts are refused with `account.throttled` and its retry-after, before any hashing. A success clears
    /// the userId's count, and rehashes a password stored with weaker parameters than today's.
    ///
    /// With a second factor enrolled, a correct password gives no session but a challenge (``IdentityLoginAnswer``):
    /// the session comes from ``completeSecondFactor(_:)``.
    public func login(_ request: IdentityLoginRequest) async throws(ServiceError) -> IdentityLoginAnswer {
        guard PasswordHashingPool.acceptsLength(of: request.password) else { throw Self.passwordTooLong }
        let normalizedUserId = UserIdNormalization.normalized(request.userId, type: configuration.userIdType)
        let clients = clientHashes(address: request.clientAddress, device: request.clientDevice)
        // [userId, address?, this client's failures at this userId?]
        var keys = throttleKeys(normalizedUserId: normalizedUserId, clientAddress: request.clientAddress)
        if let client = clients.first {
            keys.append("user-client:" + Self.digest(normalizedUserId + "\u{0}" + Self.hex(client)))
        }
        let now = clock()
        let lookup = try await stored { () async throws(IdentityStorageError) in
            try await storage.loginLookup(normalizedUserId: normalizedUserId, keys: keys, at: now, window: options.throttle.window)
        }
        let counts = lookup.counts
        let credential = lookup.credential
        var heldUserId = false
        if let seconds = options.throttle.retryAfter(counts, at: now) {
            heldUserId = true
            // The userId's count is anyone's: a client that signed in to this account before is held only by its own
            // failures and its address's, so a stranger's guessing never locks the owner out (OWASP's device cookies).
            let ownCounts = Array(counts.dropFirst())
            let heldByOthersOnly = options.throttle.retryAfter(ownCounts, at: now) == nil
            guard heldByOthersOnly, let credential, !clients.isEmpty,
                  try await stored({ () async throws(IdentityStorageError) in
                      try await storage.isKnownClient(accountId: credential.accountId, clients: clients, since: now.adding(.zero - options.knownClientAge))
                  })
            else {
                throw .throttled(retryAfterSeconds: seconds)
            }
        }
        let hash = credential?.passwordHash.flatMap(PasswordHash.init(encoded:))
        let matches = try await hashing { try await hashing.verify(request.password.value, against: hash) }
        guard matches, let credential, let hash else {
            try await stored { () async throws(IdentityStorageError) in
                try await storage.recordFailures(keys: keys, at: now, window: options.throttle.window)
            }
            throw Self.wrongCredentials
        }
        let accountId = credential.accountId
        // A success forgets the userId's failures and this client's own; not the userId's while they hold it (this
        // client passed as known: the storm goes on for everyone else). Only when there is something to forget: most
        // logins then write nothing before their session.
        for (index, key) in keys.enumerated() where counts[index].count > 0 && !key.hasPrefix("address:") && !(index == 0 && heldUserId) {
            try await stored { () async throws(IdentityStorageError) in try await storage.clearFailures(key: key) }
        }
        if hashing.hasher.needsRehash(hash) {
            await rehash(request.password, of: credential)
        }
        // Known from the lookup: a login without a second factor reads nothing more for it.
        if lookup.demandsSecondFactor {
            logger.debug("second factor asked for", metadata: ["konto.account_id": "\(accountId)"])
            return IdentityLoginAnswer(challenge: try await secondFactorChallenge(for: credential, at: now))
        }
        let answer = try await signedInDetails(credential)
        // Under the credential version whose password was checked: should the password (or userId) have changed
        // since, the session is not created, and the login fails as a wrong password would.
        let (session, token) = makeSession(accountId: accountId, credentialVersion: credential.credentialVersion, privileged: true, at: now)
        do {
            try await storage.createSession(session, events: [event(accountId, .associatedAccount, at: now)])
        } catch where error.code == .notFound {
            throw Self.wrongCredentials
        } catch {
            throw Self.error(for: error)
        }
        // Known from now on (a failure here only means the next lockout may hold this client too).
        try? await storage.rememberClients(accountId: accountId, clients: clients, at: now)
        logger.debug("logged in", metadata: ["konto.account_id": "\(accountId)", "konto.session_id": "\(session.id)"])
        return IdentityLoginAnswer(accountSession: IdentityAccountSession(
            accountId: accountId, session: IdentitySession(token: BearerToken(token), expiresAt: session.absoluteExpiresAt), details: answer
        ))
    }

    /// The throttling keys of an attempt: the userId's first (a success clears it), then the client address's.
    ///
    /// Keys are SHA-256 digests (hex) of what they count: bounded whatever the input (a 64 KiB userId must not break
    /// the failures table's index), and the table holds no userIds or addresses in clear.
    func throttleKeys(normalizedUserId: String, clientAddress: String?) -> [String] {
        var keys = ["user:" + Self.digest(normalizedUserId)]
        if let clientAddress, !clientAddress.isEmpty {
            keys.append("address:" + Self.digest(clientAddress))
        }
        return keys
    }

    static func digest(_ text: String) -> String {
        hex(Array(SHA256.hash(data: Array(text.utf8))))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// What a client is known by: SHA-256 of its device marker (first, when it has one) and of its address.
    func clientHashes(address: String?, device: String?) -> [[UInt8]] {
        var clients: [[UInt8]] = []
        if let device, (1...256).contains(device.utf8.count) {
            clients.append(Array(SHA256.hash(data: Array(("device:" + device).utf8))))
        }
        if let address, !address.isEmpty {
            clients.append(Array(SHA256.hash(data: Array(("address:" + address).utf8))))
        }
        return clients
    }

    /// Refuses the attempt with `account.throttled` while any key is locked.
    /// Returns the keys' current counts.
    @discardableResult
    /// The details a sign-in answers with (login, second factor, passkey): Profile's record assembled with what the
    /// credential holds. No session without them: Profile unreachable is `identity.profileUnavailable`, and the caller
    /// retries the whole sign-in.
    func signedInDetails(_ credential: StoredCredential) async throws(ServiceError) -> AccountDetails {
        let record: ProfileRecord?
        do {
            record = try await profile.load(accountId: credential.accountId)
        } catch {
            throw .identityProfileUnavailable
        }
        let verified = emailVerified(userId: credential.userId, verified: credential.emailVerifiedAt != nil)
        return assembler.account(accountId: credential.accountId, profile: record, userId: credential.userId, isAnonymous: false, emailVerified: verified).details
    }

    func checkThrottle(_ keys: [String], at now: Timestamp) async throws(ServiceError) -> [FailureCount] {
        let counts = try await stored { () async throws(IdentityStorageError) in
            try await storage.failures(keys: keys, at: now, window: options.throttle.window)
        }
        if let seconds = options.throttle.retryAfter(counts, at: now) {
            throw .throttled(retryAfterSeconds: seconds)
        }
        return counts
    }

    /// Counts a failed password check (login, reauthentication, a security-related operation's current password).
    func recordFailure(_ keys: [String], at now: Timestamp) async throws(ServiceError) {
        try await stored { () async throws(IdentityStorageError) in
            try await storage.recordFailures(keys: keys, at: now, window: options.throttle.window)
        }
    }

    /// Stores a hash with today's parameters, unless the credential changed since it was read (then the new
    /// password's hash stays); a failure only delays it to the next login.
    private func rehash(_ password: SecretString, of credential: StoredCredential) async {
        let accountId = credential.accountId
        do {
            let fresh = try await hashing.hash(password.value)
            if try await storage.rehashPassword(accountId: accountId, passwordHash: fresh.encoded, credentialVersion: credential.credentialVersion) {
                logger.info("password rehashed with current parameters", metadata: ["konto.account_id": "\(accountId)"])
            }
        } catch {
            logger.warning("password rehash failed", metadata: ["konto.account_id": "\(accountId)"])
        }
    }
}
