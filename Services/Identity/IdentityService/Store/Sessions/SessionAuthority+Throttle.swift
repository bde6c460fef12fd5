import Crypto
import Foundation
import KontoContracts
import KontoModel
import Logging

extension SessionAuthority {
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

    func clientMarkers(address: String?, device: String?) -> [String] {
        var markers: [String] = []
        if let device, (1...256).contains(device.utf8.count) { markers.append("device:" + device) }
        if let address, !address.isEmpty { markers.append("address:" + address) }
        return markers
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

    /// Counts a failed password check (login, reauthentication, a security-related operation's current password),
    /// with its audit entry when given (written in the same statement).
    func recordFailure(_ keys: [String], at now: Timestamp, audit: AuditRecord? = nil) async throws(ServiceError) {
        try await stored { () async throws(IdentityStorageError) in
            try await storage.recordFailures(keys: keys, at: now, window: options.throttle.window, audit: audit.map { [$0] } ?? [])
        }
    }
}
