import Foundation
import KontoContracts
import KontoModel
import Logging

extension SecondFactors {
    static let factorNotFound = ServiceError(AccountError(code: .factorNotFound))

    // MARK: Managing factors

    /// The account's factors, pending TOTP enrolments included.
    func listFactors(_ request: IdentitySessionRequest) async throws(ServiceError) -> IdentityFactors {
        let session = try await sessions.validSession(request.token, at: clock())
        let accountId = session.accountId
        let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        return IdentityFactors(factors: factors.map(Self.answer))
    }

    /// Starts a TOTP enrolment (security-related): the secret and the otpauth URI, shown once. It is not asked for at
    /// login until ``confirmTOTP(_:)`` confirms it with a first code; a new enrolment replaces an unconfirmed one.
    func enrollTOTP(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentityTOTPEnrolment {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        try await authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let credential = try await signedUpCredential(session.accountId)
        let accountId = session.accountId
        let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        guard factors.filter(\.confirmed).count < options.maximumFactors else { throw Self.tooManyFactors(options.maximumFactors) }
        let secret = TOTPAuthenticator.generateSecret()
        let factorId = UUID().uuidString.lowercased()
        let factor = StoredFactor(
            id: factorId, accountId: accountId, kind: .totp, name: "Authenticator app",
            sealedSecret: factorSecrets.seal(secret, accountId: accountId, factorId: factorId), confirmed: false, createdAt: now
        )
        try await stored { () async throws(IdentityStorageError) in try await storage.addPendingFactor(factor) }
        let authenticator = TOTPAuthenticator(issuer: options.totpIssuer)
        let base32 = TOTPAuthenticator.base32(secret)
        return IdentityTOTPEnrolment(
            factorId: factorId, secret: BearerToken(base32),
            otpauthURI: BearerToken(authenticator.provisioningURI(secret: secret, label: credential.userId ?? accountId))
        )
    }

    /// Confirms a pending TOTP enrolment with a first valid code: from now on a login asks for it. `factorAdded`.
    func confirmTOTP(_ request: IdentityConfirmFactorRequest) async throws(ServiceError) -> IdentityFactor {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        let accountId = session.accountId
        let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        guard let factor = factors.first(where: { $0.id == request.factorId && $0.kind == .totp && !$0.confirmed }),
              let sealed = factor.sealedSecret, let secret = factorSecrets.open(sealed, accountId: accountId, factorId: factor.id)
        else { throw Self.factorNotFound }
        let failures = try await checkCodeThrottle(accountId, at: now)
        guard request.code.value.utf8.count <= 16, let step = TOTPAuthenticator.matchingStep(of: request.code.value, secret: secret, at: now) else {
            throw try await codeRefused(accountId, at: now)
        }
        let address = await mail.mailAddress(accountId: accountId)
        let confirmed = try await stored { () async throws(IdentityStorageError) in
            try await storage.confirmFactor(
                accountId: accountId, factorId: factor.id, step: step, at: now,
                events: factorEvents(accountId, .factorAdded(factorId: factor.id, factorType: StoredFactor.Kind.totp.rawValue), address: address, at: now)
            )
        }
        guard confirmed else { throw Self.factorNotFound }
        try await codeAccepted(accountId, failures: failures)
        logger.info("second factor added", metadata: ["konto.account_id": "\(accountId)", "konto.factor_type": "totp"])
        var answer = factor
        answer.confirmed = true
        answer.lastUsedAt = now
        return Self.answer(answer)
    }

    /// Removes a factor (security-related; with second factors, an `aal2` window). `factorRemoved` says how many are
    /// left; removing the last is allowed, and the answer says so (0).
    func removeFactor(_ request: IdentityRemoveFactorRequest) async throws(ServiceError) -> IdentityFactorRemoved {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        try await authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        return try await remove(factorId: request.factorId, of: session.accountId, at: now)
    }

    /// Removes a factor of the account, the owner's way or an operator's (the help desk): `factorRemoved` and the
    /// owner's notice in one transaction. `account.factorNotFound` for no such factor of this account.
    func remove(factorId: String, of accountId: String, at now: Timestamp) async throws(ServiceError) -> IdentityFactorRemoved {
        guard factorId.utf8.count <= 64 else { throw Self.factorNotFound }
        let address = await mail.mailAddress(accountId: accountId)
        let removed = try await stored { () async throws(IdentityStorageError) in
            try await storage.removeFactor(accountId: accountId, factorId: factorId) { kind, remaining in
                self.factorEvents(accountId, .factorRemoved(factorId: factorId, factorType: kind.rawValue, remaining: remaining), address: address, at: now)
            }
        }
        guard let left = removed?.remaining else { throw Self.factorNotFound }
        logger.info("second factor removed", metadata: ["konto.account_id": "\(accountId)", "konto.factors_left": "\(left)"])
        return IdentityFactorRemoved(remainingFactors: left)
    }

    /// Ten new recovery codes (security-related), replacing every earlier one; shown once. `factorAdded`.
    func regenerateRecoveryCodes(_ request: IdentitySecuredRequest) async throws(ServiceError) -> IdentityRecoveryCodes {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        try await authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let credential = try await signedUpCredential(session.accountId)
        let accountId = session.accountId
        let codes = RecoveryCodes.generate()
        let factor = StoredFactor(id: UUID().uuidString.lowercased(), accountId: accountId, kind: .recoveryCodes, name: "Recovery codes", confirmed: true, createdAt: now)
        try await stored { () async throws(IdentityStorageError) in
            try await storage.replaceRecoveryCodes(
                factor, codeHashes: codes.map { factorSecrets.recoveryCodeDigest($0, accountId: accountId) },
                events: factorEvents(accountId, .factorAdded(factorId: factor.id, factorType: StoredFactor.Kind.recoveryCodes.rawValue), address: credential.userId, at: now)
            )
        }
        logger.info("recovery codes made", metadata: ["konto.account_id": "\(accountId)"])
        return IdentityRecoveryCodes(codes: codes.map(BearerToken.init))
    }

    /// The account's credential, which must have a userId: an anonymous account has no second factors.
    /// A factor's event, and the mail that tells the account's owner of it.
    func factorEvents(_ accountId: String, _ kind: AccountEvent.Kind, address: String?, at now: Timestamp) -> [AccountEvent] {
        let message: MailRequest.Message
        let factorType: String
        switch kind {
        case let .factorAdded(_, type): (message, factorType) = (.factorAdded, type)
        case let .factorRemoved(_, type, _): (message, factorType) = (.factorRemoved, type)
        default: return [event(accountId, kind, at: now)]
        }
        return [event(accountId, kind, at: now), mail.mailEvent(accountId, to: address, message, values: ["factorType": factorType], at: now)].compactMap { $0 }
    }

    func signedUpCredential(_ accountId: String) async throws(ServiceError) -> StoredCredential {
        let credential = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }
        guard let credential, credential.userId != nil else {
            throw ServiceError(AccountError(code: .notFound, message: "An anonymous account has no second factors; sign up first."))
        }
        return credential
    }

    static func tooManyFactors(_ limit: Int) -> ServiceError {
        ServiceError(AccountError(code: .validationFailed, fields: [
            AccountFieldError(key: "factor", code: .valueTooLarge, message: "An account has at most \(limit) second factors; remove one first."),
        ]))
    }

    static func answer(_ factor: StoredFactor) -> IdentityFactor {
        IdentityFactor(
            id: factor.id, type: factor.kind.rawValue, name: factor.name, createdAt: factor.createdAt, lastUsedAt: factor.lastUsedAt,
            pending: !factor.confirmed, remaining: factor.kind == .recoveryCodes ? factor.remaining : nil
        )
    }
}
