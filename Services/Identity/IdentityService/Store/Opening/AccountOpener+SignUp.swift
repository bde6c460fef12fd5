import Foundation
import KontoContracts
import KontoModel
import Logging

extension AccountOpener {
    /// Creates an account with credentials and details and logs it in; from an anonymous session, upgrades that
    /// account instead, keeping its accountId.
    ///
    /// The whole request is checked first against the account configuration, every violation in one answer; a taken
    /// userId is refused before the expensive hash (the reservation or the upgrade is what guarantees it). Then the
    /// account is opened (``openAccount(_:at:)``): userId reserved, details to Profile, and only then usable.
    func signUp(_ request: IdentitySignUpRequest) async throws(ServiceError) -> IdentityAccountSession {
        let userId = UserIdNormalization.trimmed(request.userId)
        let details = try checkSignUp(userId: userId, password: request.password, details: request.details)
        let normalizedUserId = UserIdNormalization.normalized(userId, type: configuration.userIdType)
        let now = clock()
        var upgrading: StoredSession?
        if let anonymousToken = request.anonymousSession {
            let session = try await sessions.validSession(anonymousToken, at: now)
            guard session.accountIsAnonymous else { throw ServiceError(AccountError(code: .alreadySignedUp)) }
            upgrading = session
        }
        if try await stored({ () async throws(IdentityStorageError) in try await storage.credential(normalizedUserId: normalizedUserId) }) != nil {
            throw ServiceError(AccountError(code: .credentialsTaken))
        }
        let hash = try await sessions.hashing { try await sessions.hashing.hash(request.password.value) }
        return try await openAccount(
            AccountOpening(
                credential: .password(hash: hash.encoded), userId: userId, normalizedUserId: normalizedUserId, details: details, upgrading: upgrading,
                clients: sessions.clientHashes(address: request.clientAddress, device: nil)
            ),
            at: now
        )
    }

    /// Creates an anonymous account and its session; it has no details until it signs up.
    func signInAnonymously(_ request: IdentityClientRequest) async throws(ServiceError) -> IdentityAccountSession {
        let now = clock()
        let accountId = UUID().uuidString.lowercased()
        let credential = StoredCredential(accountId: accountId, userId: nil, normalizedUserId: nil, passwordHash: nil, createdAt: now)
        let (session, token) = sessions.makeSession(accountId: accountId, credentialVersion: credential.credentialVersion, privileged: false, method: "anonymous", at: now)
        let facts = credential.facts(userIdType: configuration.userIdType)
        let details = assembler.account(facts, profile: nil).details
        try await stored { () async throws(IdentityStorageError) in
            try await storage.createAnonymousAccount(credential, session: session, events: [event(accountId, .associatedAccount, at: now)])
        }
        logger.info("anonymous account created", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityAccountSession(session: IdentitySession(token: BearerToken(token), expiresAt: session.absoluteExpiresAt), details: details, account: facts)
    }

    /// Drops a reservation after Profile failed, and answers with Profile's refusal or `identity.profileUnavailable`.
    func abandon(accountId: String, after error: ProfileProviderError) async throws(ServiceError) -> Never {
        switch error {
        case let .refused(refusal):
            // Nothing was stored: Profile refused the details.
            try await stored { () async throws(IdentityStorageError) in try await storage.abandonAccount(accountId: accountId, profileCleanupAt: nil) }
            throw refusal
        case .unavailable:
            let cleanupAt = clock().adding(options.profileCleanupDelay)
            try await stored { () async throws(IdentityStorageError) in try await storage.abandonAccount(accountId: accountId, profileCleanupAt: cleanupAt) }
            logger.warning("sign-up abandoned: profile unavailable", metadata: ["konto.account_id": "\(accountId)"])
            throw .identityProfileUnavailable
        }
    }

    /// Validates the credentials and details together, with every violation in one answer, and returns the details
    /// to store in Profile. Without a password (nil: an external identity stands for it) none is required or checked.
    /// An operator may set server-owned keys (`byOperator`).
    func checkSignUp(userId: String, password: SecretString?, details: AccountDetails, byOperator: Bool = false) throws(ServiceError) -> AccountDetails {
        var fields: [AccountFieldError] = []
        var values = details.storedValues
        for identifier in [UserIdKey.identifier, PasswordKey.identifier, AccountIdKey.identifier] where values[identifier] != nil {
            fields.append(AccountFieldError(key: identifier, code: .credentialNotAccepted, message: "Send this in its own field, not among the details."))
            values[identifier] = nil
        }
        // The operator's keys are written by services, never by the one signing up.
        if !byOperator {
            fields += configuration.serverOwnedKeyErrors(values.keys)
        }
        let profileValues = values
        var required = configuration.requiredIdentifiers
        if !UserIdNormalization.acceptsLength(of: userId) {
            fields.append(UserIdNormalization.tooLongField)
            required.removeAll { $0 == UserIdKey.identifier }
        } else if !userId.isEmpty {
            values[UserIdKey.identifier] = .string(userId)
        }
        if let password {
            if !PasswordHashingPool.acceptsLength(of: password) {
                // Not matched against the rules either: an oversized value is refused before any work on it.
                fields.append(Self.passwordTooLongField)
                required.removeAll { $0 == PasswordKey.identifier }
            } else if !password.value.isEmpty {
                values[PasswordKey.identifier] = .string(password.value)
                if let common = commonPasswordError(password) { fields.append(common) }
            }
        } else {
            required.removeAll { $0 == PasswordKey.identifier }
        }
        do {
            try configuration.validate(AccountDetails(values: values, userIdType: configuration.userIdType), requiring: required)
        } catch {
            fields += error.fields
        }
        guard fields.isEmpty else {
            let onlyMissing = fields.allSatisfy { $0.code == .missingAccountValue }
            throw ServiceError(AccountError(code: onlyMissing ? .missingAccountValue : .validationFailed, fields: fields.sorted { $0.key < $1.key }))
        }
        return AccountDetails(values: profileValues, userIdType: configuration.userIdType)
    }
}
