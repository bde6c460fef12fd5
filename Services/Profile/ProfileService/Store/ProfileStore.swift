import KontoContracts
import KontoModel
import Logging

/// The Profile service's logic: account details checked against the deployment's key schema, kept in a
/// ``ProfileStorage`` (PostgreSQL in production, in memory for the dev stack and tests).
///
/// - Credentials are never stored here: secret keys (the password) are refused with `credentialNotAccepted`,
///   so a caller that forgot to strip them learns of it instead of believing them kept. Credentials-category keys
///   (`userId`, `password`) are Identity's to require; a non-secret `userId` sent along is stored.
/// - Every refusal lists all fields at once, with the rule's message (``AccountConfiguration/validate(_:requiring:)``
///   and ``AccountConfiguration/apply(_:to:)``).
/// - Every storage call is bounded by ``ProfileStoreOptions/operationTimeout``; an unreachable database gives a
///   retryable `profile.storageUnavailable`, and the same store serves again once the database is back.
public struct ProfileStore: Sendable {
    public let configuration: AccountConfiguration
    public let options: ProfileStoreOptions
    let storage: any ProfileStorage
    let logger: Logger

    public init(storage: any ProfileStorage, configuration: AccountConfiguration, options: ProfileStoreOptions = ProfileStoreOptions(), logger: Logger) {
        self.storage = storage
        self.configuration = configuration
        self.options = options
        self.logger = logger
    }

    /// Stores the first details of an account, at version 1.
    ///
    /// An `accountId` inside `details` must match the parameter. Required keys other than credentials must be present.
    /// - Throws: `account.validationFailed` (and the other `account.*` refusals) with every field,
    ///   `profile.valueTooLarge`, `profile.accountTooLarge`, `profile.alreadyExists`, `profile.storageUnavailable`.
    public func create(accountId: String, details: AccountDetails) async throws(ServiceError) -> VersionedAccountDetails {
        let logger = logger(for: accountId)
        let values = try checkedCreation(accountId: accountId, details: details)
        let version = try await perform("create", logger: logger) { storage async throws(ProfileStorageError) in
            try await storage.insert(accountId: accountId, values: values)
        }
        logger.debug("profile created")
        return VersionedAccountDetails(details: accountDetails(accountId: accountId, values: values), version: version)
    }

    /// The account's details (only `keys` when given, never secrets) and their version.
    /// - Throws: `account.notFound`, `profile.storageUnavailable`.
    public func load(accountId: String, keys: [String]? = nil) async throws(ServiceError) -> VersionedAccountDetails {
        guard let stored = try await fetch(accountId: accountId, keys: keys) else {
            throw ServiceError.notFound()
        }
        guard let keys else {
            return VersionedAccountDetails(details: accountDetails(accountId: accountId, values: stored.values), version: stored.version)
        }
        // Picks the few keys asked for instead of copying every value and filtering the copy.
        var selected: [String: AccountValue] = [:]
        for key in keys where !isCredential(key) {
            selected[key] = key == AccountIdKey.identifier ? .string(accountId) : stored.values[key]
        }
        return VersionedAccountDetails(details: AccountDetails(values: selected, userIdType: configuration.userIdType), version: stored.version)
    }

    /// Applies `modifications` atomically: read, apply, compare-and-set.
    ///
    /// With `expectedVersion`, a record at another version fails with `account.versionConflict` (not retryable: the
    /// client must re-read). Without it, a lost race re-reads and applies again, up to
    /// ``ProfileStoreOptions/maximumModifyAttempts``, so concurrent modifies never silently lose an update.
    /// A modification that changes nothing writes nothing and keeps the version.
    /// - Throws: `account.notFound`, `account.versionConflict`, the `account.*` refusals of
    ///   ``AccountConfiguration/apply(_:to:)`` with every field, `profile.valueTooLarge`, `profile.accountTooLarge`,
    ///   `profile.storageUnavailable`.
    public func modify(accountId: String, modifications: AccountModifications, expectedVersion: Int64? = nil) async throws(ServiceError) -> VersionedAccountDetails {
        let logger = logger(for: accountId)
        let (requestErrors, applicable) = checkedModifications(modifications)
        for attempt in 1...options.maximumModifyAttempts {
            guard let stored = try await fetch(accountId: accountId) else {
                throw ServiceError.notFound()
            }
            if let expectedVersion, expectedVersion != stored.version {
                throw ServiceError.versionConflict()
            }
            let current = accountDetails(accountId: accountId, values: stored.values)
            let values = try modifiedValues(current: current, applying: applicable, requestErrors: requestErrors)
            if values == stored.values {
                return VersionedAccountDetails(details: current, version: stored.version)
            }
            let modified = accountDetails(accountId: accountId, values: values)
            // SpeziAccount's detailsChanged, written with the change (the outbox relay publishes it).
            let event = AccountEvent(accountId: accountId, kind: .detailsChanged(keys: AccountEvent.changedKeys(previous: current, new: modified)))
            let written = try await perform("modify", logger: logger) { storage async throws(ProfileStorageError) in
                try await storage.replace(accountId: accountId, values: values, ifVersion: stored.version, events: [event])
            }
            if let version = written {
                logger.debug("profile modified", metadata: ["konto.version": "\(version)"])
                return VersionedAccountDetails(details: modified, version: version)
            }
            if expectedVersion != nil {
                throw ServiceError.versionConflict()
            }
            logger.debug("profile modify lost a race; retrying", metadata: ["konto.attempt": "\(attempt)"])
            await Self.backOff(attempt: attempt)
        }
        logger.warning("profile modify gave up after repeated lost races", metadata: ["konto.attempts": "\(options.maximumModifyAttempts)"])
        throw ServiceError.versionConflict(retryable: true, message: "The account is being changed by too many requests at once; try again.")
    }

    /// Removes the account's details. Idempotent: returns whether there were any.
    @discardableResult
    public func delete(accountId: String) async throws(ServiceError) -> Bool {
        let logger = logger(for: accountId)
        guard Self.isStorableAccountId(accountId) else {
            return false
        }
        let deleted = try await perform("delete", logger: logger) { storage async throws(ProfileStorageError) in
            try await storage.delete(accountId: accountId)
        }
        logger.debug("profile deleted", metadata: ["konto.existed": "\(deleted)"])
        return deleted
    }

    /// Throws `profile.storageUnavailable` (or `profile.storageFailure`) when the storage cannot serve.
    public func checkHealth() async throws(ServiceError) {
        try await perform("checkHealth", logger: logger) { storage async throws(ProfileStorageError) in
            try await storage.checkHealth()
        }
    }

    /// Readiness for a health endpoint: whether ``checkHealth()`` passes now.
    public func isReady() async -> Bool {
        do {
            try await checkHealth()
            return true
        } catch {
            return false
        }
    }

    // MARK: Helpers

    private func fetch(accountId: String, keys: [String]? = nil) async throws(ServiceError) -> StoredProfile? {
        // An identifier that could never have been stored (empty, NUL) is simply not there.
        guard Self.isStorableAccountId(accountId) else {
            return nil
        }
        return try await fetch(accountId, keys: keys)
    }

    /// Details as callers see them: the accountId added, secrets (never stored, but never shown either) left out.
    func accountDetails(accountId: String, values: [String: AccountValue]) -> AccountDetails {
        var details = AccountDetails(values: values, userIdType: configuration.userIdType)
        details[identifier: AccountIdKey.identifier] = .string(accountId)
        return details.filter { !isCredential($0) }
    }

    func logger(for accountId: String) -> Logger {
        var logger = logger
        logger[metadataKey: "konto.account_id"] = "\(accountId)"
        return logger
    }

    /// Contention back-off: a short random pause so racing writers spread out instead of colliding again at once.
    /// Correctness never depends on it; the compare-and-set does.
    private static func backOff(attempt: Int) async {
        try? await Task.sleep(for: contention.delay(afterFailures: attempt))
    }

    /// Short and fully jittered: racing writers only need to stop colliding.
    private static let contention = Backoff(initial: .microseconds(500), maximum: .milliseconds(4), jitter: .full)
}
