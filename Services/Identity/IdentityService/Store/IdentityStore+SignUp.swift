import Foundation
import KontoContracts
import KontoModel
import Logging

extension IdentityStore {
    /// Creates an account with credentials and details and logs it in; from an anonymous session, upgrades that
    /// account instead, keeping its accountId.
    ///
    /// The whole request is checked first against the account configuration, every violation in one answer. Then the
    /// userId is reserved (`account.credentialsTaken` if it is not free), the details go to Profile, and only then
    /// does the account become usable. When Profile fails, the reservation is dropped at once (the userId is free
    /// again) and the profile is deleted after ``IdentityOptions/profileCleanupDelay``, in case a late create
    /// committed; the caller gets the retryable `identity.profileUnavailable`.
    public func signUp(_ request: IdentitySignUpRequest) async throws(ServiceError) -> IdentityAccountSession {
        let userId = UserIdNormalization.trimmed(request.userId)
        let details = try checkSignUp(userId: userId, password: request.password, details: request.details)
        let normalizedUserId = UserIdNormalization.normalized(userId, type: configuration.userIdType)
        let now = clock()
        if let anonymousToken = request.anonymousSession {
            return try await upgrade(anonymousToken, userId: userId, normalizedUserId: normalizedUserId, password: request.password, details: details)
        }
        // Cheap refusal of a taken userId before the expensive hash; the reservation below is what guarantees it.
        if try await stored({ () async throws(IdentityStorageError) in try await storage.credential(normalizedUserId: normalizedUserId) }) != nil {
            throw ServiceError(AccountError(code: .credentialsTaken))
        }
        let hash = try await hashing { try await hashing.hash(request.password.value) }
        let accountId = UUID().uuidString.lowercased()
        let credential = StoredCredential(
            accountId: accountId,
            userId: userId,
            normalizedUserId: normalizedUserId,
            passwordHash: hash.encoded,
            createdAt: now
        )
        try await stored { () async throws(IdentityStorageError) in try await storage.reserveAccount(credential) }
        let stored: ProfileRecord
        do {
            stored = try await profile.create(accountId: accountId, details: details)
        } catch {
            try await abandon(accountId: accountId, after: error)
        }
        let (session, token) = makeSession(accountId: accountId, credentialVersion: credential.credentialVersion, privileged: true, at: clock())
        let facts = credential.facts(userIdType: configuration.userIdType)
        let answer = assembler.account(facts, profile: stored).details
        do {
            try await storage.activateAccount(
                accountId: accountId,
                session: session,
                events: [event(accountId, .associatedAccount, at: now)]
            )
        } catch {
            // The reservation may be gone (abandoned as stale) or the database away: drop what is left.
            try? await storage.abandonAccount(accountId: accountId, profileCleanupAt: clock().adding(options.profileCleanupDelay))
            throw Self.error(for: error)
        }
        // The address that signed up is the owner's: strangers' failures will not lock it out.
        try? await storage.rememberClients(accountId: accountId, clients: clientHashes(address: request.clientAddress, device: nil), at: now)
        await sendSignUpVerification(accountId: accountId, userId: userId, stored: stored, at: now)
        logger.info("account signed up", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityAccountSession(session: IdentitySession(token: BearerToken(token), expiresAt: session.absoluteExpiresAt), details: answer, account: facts)
    }

    /// Creates an anonymous account and its session; it has no details until it signs up.
    public func signInAnonymously(_ request: IdentityClientRequest) async throws(ServiceError) -> IdentityAccountSession {
        let now = clock()
        let accountId = UUID().uuidString.lowercased()
        let credential = StoredCredential(accountId: accountId, userId: nil, normalizedUserId: nil, passwordHash: nil, createdAt: now)
        let (session, token) = makeSession(accountId: accountId, credentialVersion: credential.credentialVersion, privileged: false, at: now)
        let facts = credential.facts(userIdType: configuration.userIdType)
        let details = assembler.account(facts, profile: nil).details
        try await stored { () async throws(IdentityStorageError) in
            try await storage.createAnonymousAccount(credential, session: session, events: [event(accountId, .associatedAccount, at: now)])
        }
        logger.info("anonymous account created", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityAccountSession(session: IdentitySession(token: BearerToken(token), expiresAt: session.absoluteExpiresAt), details: details, account: facts)
    }

    /// Signs up from an anonymous session: the account keeps its accountId; a fresh, privileged session replaces
    /// every session it had (the presented token stops working at once: it was not authenticated by a password).
    private func upgrade(
        _ token: BearerToken,
        userId: String,
        normalizedUserId: String,
        password: SecretString,
        details: AccountDetails
    ) async throws(ServiceError) -> IdentityAccountSession {
        let now = clock()
        let session = try await validSession(token, at: now)
        guard session.accountIsAnonymous else {
            throw ServiceError(AccountError(code: .alreadySignedUp))
        }
        if try await stored({ () async throws(IdentityStorageError) in try await storage.credential(normalizedUserId: normalizedUserId) }) != nil {
            throw ServiceError(AccountError(code: .credentialsTaken))
        }
        let hash = try await hashing { try await hashing.hash(password.value) }
        let accountId = session.accountId
        let stored: ProfileRecord
        do {
            // An anonymous account holds no profile: one found here is what an earlier upgrade left when its create
            // answered late but committed. It goes first, or this retry would be refused as profile.alreadyExists.
            _ = try await profile.delete(accountId: accountId)
            stored = try await profile.create(accountId: accountId, details: details)
        } catch let .refused(refusal) {
            throw refusal
        } catch {
            throw .identityProfileUnavailable
        }
        let facts = try upgraded(session, userId: userId, normalizedUserId: normalizedUserId)
        let answer = assembler.account(facts, profile: stored).details
        let (fresh, freshToken) = makeSession(accountId: accountId, credentialVersion: session.credentialVersion + 1, privileged: true, at: clock())
        do {
            try await storage.upgradeAnonymous(
                accountId: accountId,
                userId: userId,
                normalizedUserId: normalizedUserId,
                passwordHash: hash.encoded,
                session: fresh,
                events: [event(accountId, .associatedAccount, at: now)]
            )
        } catch {
            // Taken in the meantime, or the database away: the profile just made must go.
            _ = try? await profile.delete(accountId: accountId)
            throw Self.error(for: error)
        }
        await sendSignUpVerification(accountId: accountId, userId: userId, stored: stored, at: now)
        logger.info("anonymous account signed up", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityAccountSession(session: IdentitySession(token: BearerToken(freshToken), expiresAt: fresh.absoluteExpiresAt), details: answer, account: facts)
    }

    /// The facts of an anonymous session's account once it signed up with `userId`: its accountId and creation kept, an
    /// unverified userId.
    func upgraded(_ session: StoredSession, userId: String, normalizedUserId: String) throws(ServiceError) -> IdentityAccountFacts {
        guard var account = session.account else { throw Self.unauthenticated }
        account.userId = userId
        account.normalizedUserId = normalizedUserId
        account.emailVerifiedAt = nil
        account.verifiedEmail = nil
        return account.facts(userIdType: configuration.userIdType)
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
    func checkSignUp(userId: String, password: SecretString?, details: AccountDetails) throws(ServiceError) -> AccountDetails {
        var fields: [AccountFieldError] = []
        var values = details.storedValues
        for identifier in [UserIdKey.identifier, PasswordKey.identifier, AccountIdKey.identifier] where values[identifier] != nil {
            fields.append(AccountFieldError(key: identifier, code: .credentialNotAccepted, message: "Send this in its own field, not among the details."))
            values[identifier] = nil
        }
        // The operator's keys are written by services, never by the one signing up.
        fields += configuration.serverOwnedKeyErrors(values.keys)
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
