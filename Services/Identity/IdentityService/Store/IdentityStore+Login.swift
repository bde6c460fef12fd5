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
        let heldUserId = try await admitSignIn(
            counts, credential: credential, clients: knownClientCandidates(address: request.clientAddress, device: request.clientDevice), at: now
        )
        let hash = credential?.passwordHash.flatMap(PasswordHash.init(encoded:))
        let matches = try await hashing { try await hashing.verify(request.password.value, against: hash) }
        guard matches, let credential, let hash else {
            try await stored { () async throws(IdentityStorageError) in
                try await storage.recordFailures(keys: keys, at: now, window: options.throttle.window)
            }
            throw Self.wrongCredentials
        }
        try await forgetFailures(keys, counts: counts, heldUserId: heldUserId)
        if hashing.hasher.needsRehash(hash) {
            await rehash(request.password, of: credential)
        }
        return try await finishSignIn(credential, demandsSecondFactor: lookup.demandsSecondFactor, privileged: true, clients: clients, method: "a password", at: now)
    }

    /// A checked first factor's answer: a second-factor challenge when the account has one (known from the lookup: a
    /// login without one reads nothing more for it), else a session under the credential version that was checked
    /// (should the password or userId have changed since, none is made and the sign-in fails as a wrong password
    /// would), its client remembered as known.
    func finishSignIn(
        _ credential: StoredCredential, demandsSecondFactor: Bool, privileged: Bool, clients: [[UInt8]], method: String, at now: Timestamp
    ) async throws(ServiceError) -> IdentityLoginAnswer {
        let accountId = credential.accountId
        if demandsSecondFactor {
            logger.debug("second factor asked for", metadata: ["konto.account_id": "\(accountId)"])
            return IdentityLoginAnswer(challenge: try await secondFactorChallenge(for: credential, at: now))
        }
        let answer = try await signedInDetails(credential)
        let (session, token) = makeSession(accountId: accountId, credentialVersion: credential.credentialVersion, privileged: privileged, at: now)
        do {
            try await storage.createSession(session, events: [event(accountId, .associatedAccount, at: now)])
        } catch where error.code == .notFound {
            throw Self.wrongCredentials
        } catch {
            throw Self.error(for: error)
        }
        // Known from now on (a failure here only means the next lockout may hold this client too).
        await rememberSignIn(accountId: accountId, clients: clients, method: method, at: now)
        logger.debug("logged in", metadata: ["konto.account_id": "\(accountId)", "konto.session_id": "\(session.id)"])
        return IdentityLoginAnswer(accountSession: IdentityAccountSession(
            session: IdentitySession(token: BearerToken(token), expiresAt: session.absoluteExpiresAt), details: answer.details, account: answer.facts
        ))
    }

    /// Refuses a sign-in attempt (`account.throttled`) while its counts ([userId, then the client's]) hold it, but for a
    /// client that signed in to this account before and is held by the userId's count alone: that count is anyone's,
    /// and a stranger's guessing never locks the owner out (OWASP's device cookies). Returns whether the userId's count
    /// holds (a known client's success then leaves it: the storm goes on for everyone else).
    func admitSignIn(_ counts: [FailureCount], credential: StoredCredential?, clients: [[UInt8]], at now: Timestamp) async throws(ServiceError) -> Bool {
        guard let seconds = options.throttle.retryAfter(counts, at: now) else { return false }
        let heldByOthersOnly = options.throttle.retryAfter(Array(counts.dropFirst()), at: now) == nil
        guard heldByOthersOnly, let credential, !clients.isEmpty,
              try await stored({ () async throws(IdentityStorageError) in
                  try await storage.isKnownClient(accountId: credential.accountId, clients: clients, since: now.adding(.zero - options.knownClientAge))
              })
        else {
            throw .throttled(retryAfterSeconds: seconds)
        }
        return true
    }

    /// Forgets a successful sign-in's failure counts: the userId's (unless it holds others: ``admitSignIn``) and this
    /// client's own, never its address's. Only those that counted: most sign-ins then write nothing before their session.
    func forgetFailures(_ keys: [String], counts: [FailureCount], heldUserId: Bool) async throws(ServiceError) {
        for (index, key) in keys.enumerated() where counts[index].count > 0 && !key.hasPrefix("address:") && !(index == 0 && heldUserId) {
            try await stored { () async throws(IdentityStorageError) in try await storage.clearFailures(key: key) }
        }
    }

    /// The throttling keys of an attempt: the userId's first (a success clears it), then the client address's.
    ///
    /// Keys are digests (hex) of what they count: bounded whatever the input (a 64 KiB userId must not break the
    /// failures table's index), and the table holds no userIds or addresses in clear; an address's under the data key,
    /// since a plain hash of every IPv4 address is computed in seconds.
    func throttleKeys(normalizedUserId: String, clientAddress: String?) -> [String] {
        var keys = ["user:" + Self.digest(normalizedUserId)]
        if let clientAddress, !clientAddress.isEmpty {
            keys.append("address:" + Self.hex(factorSecrets.clientDigest("address:" + clientAddress)))
        }
        return keys
    }

    static func digest(_ text: String) -> String {
        hex(Array(SHA256.hash(data: Array(text.utf8))))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// What a client is known by: the keyed digest (``FactorSecretBox/clientDigest(_:)``) of its device marker
    /// (first, when it has one) and of its address.
    func clientHashes(address: String?, device: String?) -> [[UInt8]] {
        clientMarkers(address: address, device: device).map(factorSecrets.clientDigest)
    }

    /// What asks whether a client is known: its digests, and the unkeyed SHA-256 that known clients were remembered
    /// as before (still counted until they age out after ``IdentityOptions/knownClientAge``; nothing new is stored so).
    func knownClientCandidates(address: String?, device: String?) -> [[UInt8]] {
        let markers = clientMarkers(address: address, device: device)
        return markers.map(factorSecrets.clientDigest) + markers.map { Array(SHA256.hash(data: Array($0.utf8))) }
    }

    private func clientMarkers(address: String?, device: String?) -> [String] {
        var markers: [String] = []
        if let device, (1...256).contains(device.utf8.count) { markers.append("device:" + device) }
        if let address, !address.isEmpty { markers.append("address:" + address) }
        return markers
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

    /// Refuses the attempt with `account.throttled` while any key is locked.
    /// Returns the keys' current counts.
    @discardableResult
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
