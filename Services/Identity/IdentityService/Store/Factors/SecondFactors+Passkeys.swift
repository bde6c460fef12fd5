import Crypto
import Foundation
import KontoContracts
import KontoModel
import KontoWebAuthn
import Logging

extension SecondFactors {
    // MARK: Registering

    /// Options to make a passkey for the signed-in account (security-related: the privileged window, or the current
    /// password; with second factors, an `aal2` window). The challenge is for this account and works once.
    func passkeyRegistrationOptions(_ request: IdentitySecuredRequest) async throws(ServiceError) -> PasskeyCreationOptions {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        try await authorizeSecurityOperation(session, currentPassword: request.currentPassword, at: now)
        let credential = try await signedUpCredential(session.accountId)
        let accountId = session.accountId
        let factors = try await stored { () async throws(IdentityStorageError) in try await storage.factors(accountId: accountId) }
        guard factors.filter(\.confirmed).count < options.maximumFactors else { throw Self.tooManyFactors(options.maximumFactors) }
        let challenge = PasskeyChallenge.make(.registration, accountId: accountId, expiresAt: now.adding(options.challengeLifetime), key: factorSecrets.challengeKey)
        let name = credential.userId ?? accountId
        let relyingParty = options.relyingParty
        return PasskeyCreationOptions(
            rp: .init(id: relyingParty.id, name: relyingParty.name),
            user: .init(id: Base64URL.encode(Array(accountId.utf8)), name: name, displayName: name),
            challenge: Base64URL.encode(challenge),
            pubKeyCredParams: COSEKey.Algorithm.allCases.map { .init(alg: $0.rawValue) },
            timeout: Int(options.challengeLifetime.milliseconds),
            excludeCredentials: Self.descriptors(factors),
            // Discoverable and verified where the authenticator can (a passkey then also signs in without the
            // password); a security key without either still makes a second factor.
            authenticatorSelection: .init(residentKey: "preferred", requireResidentKey: false, userVerification: "preferred"),
            attestation: "none"
        )
    }

    /// Registers a passkey made for options from ``passkeyRegistrationOptions(_:)``: verified (WebAuthn §7.1), its
    /// public key sealed, asked for at login from now on. `factorAdded`.
    /// - Throws: `account.validationFailed` naming why the passkey was refused (another challenge or origin, a
    ///   signature that does not verify, an algorithm Konto does not verify, registered already, …).
    func registerPasskey(_ request: IdentityRegisterPasskeyRequest) async throws(ServiceError) -> IdentityFactor {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        let accountId = session.accountId
        let name = try Self.passkeyName(request.name)
        let registration: WebAuthnVerifier.Registration
        let challenge: [UInt8]
        let expiresAt: Timestamp
        do throws(WebAuthnError) {
            let clientData = try Base64URL.decode(request.credential.response.clientDataJSON, "clientDataJSON")
            let attestation = try Base64URL.decode(request.credential.response.attestationObject, "attestationObject")
            challenge = try WebAuthnVerifier.challenge(inClientData: clientData)
            guard let expiry = PasskeyChallenge.open(challenge, .registration, accountId: accountId, at: now, key: factorSecrets.challengeKey) else {
                throw WebAuthnError(.wrongChallenge, "not a registration challenge Konto gave this account, or expired")
            }
            expiresAt = expiry
            registration = try passkeyVerifier.verifyRegistration(
                clientDataJSON: clientData, attestationObject: attestation, expectedChallenge: challenge, requireUserVerification: false
            )
            guard try Self.credentialId(request.credential.rawId) == registration.credentialId else {
                throw WebAuthnError(.malformed, "the credential's rawId is not the ID its authenticator data names")
            }
        } catch {
            throw Self.passkeyRefused(error)
        }
        let hash = Array(SHA256.hash(data: challenge))
        guard try await stored({ () async throws(IdentityStorageError) in try await storage.consumePasskeyChallenge(hash: hash, expiresAt: expiresAt) }) else {
            throw Self.passkeyRefused(WebAuthnError(.wrongChallenge, "this challenge was answered already; ask for new options"))
        }
        let factorId = UUID().uuidString.lowercased()
        let factor = StoredFactor(
            id: factorId, accountId: accountId, kind: .passkey, name: name,
            sealedSecret: factorSecrets.seal(bytes: registration.publicKey, accountId: accountId, factorId: factorId),
            confirmed: true, createdAt: now, credentialId: registration.credentialId, signCount: Int64(registration.signCount)
        )
        let address = await mail.mailAddress(accountId: accountId)
        let added = try await stored { () async throws(IdentityStorageError) in
            try await storage.addPasskey(factor, events: factorEvents(accountId, .factorAdded(factorId: factorId, factorType: StoredFactor.Kind.passkey.rawValue), address: address, at: now))
        }
        guard added else { throw Self.passkeyRefused(WebAuthnError(.malformed, "this passkey is registered already")) }
        logger.info("second factor added", metadata: [
            "konto.account_id": "\(accountId)", "konto.factor_type": "passkey", "konto.passkey_algorithm": "\(registration.algorithm)",
            "konto.passkey_attestation": "\(registration.attestationFormat)",
        ])
        return Self.answer(factor)
    }

    /// Verifies a passkey's assertion (WebAuthn §7.2) over one of Konto's challenges, uses the challenge up and moves
    /// the passkey's counter on; the passkey used, and whether its authenticator verified the user (a PIN or biometric:
    /// then it is two factors in one).
    ///
    /// - Parameters:
    ///   - accountId: the account the passkey must belong to (nil: any, a passwordless login).
    ///   - challengeAccount: the account the challenge was issued for (a second-factor challenge), nil for login options.
    /// - Throws: `account.wrongCredentials` for every refusal alike; the reason goes to the log.
    func verifyPasskeyAssertion(
        _ credential: PasskeyAssertionCredential,
        for accountId: String?,
        challengeAccount: String?,
        requireUserVerification: Bool,
        at now: Timestamp
    ) async throws(ServiceError) -> (factor: StoredFactor, userVerified: Bool) {
        let clientData: [UInt8], authenticatorData: [UInt8], signature: [UInt8], credentialId: [UInt8], challenge: [UInt8]
        let expiresAt: Timestamp
        do throws(WebAuthnError) {
            clientData = try Base64URL.decode(credential.response.clientDataJSON, "clientDataJSON")
            authenticatorData = try Base64URL.decode(credential.response.authenticatorData, "authenticatorData")
            signature = try Base64URL.decode(credential.response.signature, "signature")
            credentialId = try Self.credentialId(credential.rawId)
            challenge = try WebAuthnVerifier.challenge(inClientData: clientData)
            guard let expiry = PasskeyChallenge.open(challenge, .assertion, accountId: challengeAccount, at: now, key: factorSecrets.challengeKey) else {
                throw WebAuthnError(.wrongChallenge, "not a challenge Konto gave for this, or expired")
            }
            expiresAt = expiry
        } catch {
            throw await passkeyDenied(error, accountId: accountId)
        }
        let found = try await stored { () async throws(IdentityStorageError) in try await storage.passkey(credentialId: credentialId) }
        guard let factor = found, accountId.map({ $0 == factor.accountId }) ?? true else {
            throw await passkeyDenied(WebAuthnError(.invalidSignature, "no such passkey for this account"), accountId: accountId)
        }
        // A discoverable passkey names its account: it must be the one Konto gave it. A passwordless sign-in, which
        // finds the account from the passkey alone, requires the name (WebAuthn §7.2 step 6).
        if accountId == nil, credential.response.userHandle == nil {
            throw await passkeyDenied(WebAuthnError(.invalidSignature, "a passwordless sign-in without the user handle"), accountId: factor.accountId)
        }
        if let handle = credential.response.userHandle, handle != Base64URL.encode(Array(factor.accountId.utf8)) {
            throw await passkeyDenied(WebAuthnError(.invalidSignature, "the user handle is not the passkey's account"), accountId: factor.accountId)
        }
        guard let sealed = factor.sealedSecret, let keyBytes = factorSecrets.openBytes(sealed, accountId: factor.accountId, factorId: factor.id),
              let key = try? COSEKey(bytes: keyBytes)
        else {
            // Written by someone without the deployment's secret, or under another secret: never trusted.
            logger.error("passkey key does not open", metadata: ["konto.account_id": "\(factor.accountId)", "konto.factor_id": "\(factor.id)"])
            throw Self.wrongCredentials
        }
        let stored = factor.signCount ?? 0
        let assertion: WebAuthnVerifier.Assertion
        do {
            assertion = try passkeyVerifier.verifyAssertion(
                clientDataJSON: clientData, authenticatorData: authenticatorData, signature: signature, expectedChallenge: challenge,
                publicKey: key, storedSignCount: UInt32(clamping: stored), requireUserVerification: requireUserVerification
            )
        } catch {
            throw await passkeyDenied(error, accountId: factor.accountId)
        }
        let hash = Array(SHA256.hash(data: challenge))
        guard try await self.stored({ () async throws(IdentityStorageError) in try await storage.consumePasskeyChallenge(hash: hash, expiresAt: expiresAt) }) else {
            throw await passkeyDenied(WebAuthnError(.wrongChallenge, "the challenge was answered already"), accountId: factor.accountId)
        }
        let moved = try await self.stored { () async throws(IdentityStorageError) in
            try await storage.usePasskey(accountId: factor.accountId, factorId: factor.id, signCount: stored, newSignCount: Int64(assertion.signCount), at: now)
        }
        guard moved else {
            throw await passkeyDenied(WebAuthnError(.signCountRegression, "the counter moved under a concurrent use"), accountId: factor.accountId)
        }
        var used = factor
        used.signCount = Int64(assertion.signCount)
        used.lastUsedAt = now
        return (used, assertion.userVerified)
    }

    /// Options for the account's passkeys as its login's second factor (the challenge is for this account).
    func passkeyRequestOptions(for accountId: String, allowing passkeys: [StoredFactor], expiresAt: Timestamp) -> PasskeyRequestOptions {
        let challenge = PasskeyChallenge.make(.assertion, accountId: accountId, expiresAt: expiresAt, key: factorSecrets.challengeKey)
        return PasskeyRequestOptions(
            challenge: Base64URL.encode(challenge), timeout: Int(options.challengeLifetime.milliseconds), rpId: options.relyingParty.id,
            allowCredentials: Self.descriptors(passkeys), userVerification: "preferred"
        )
    }

    var passkeyVerifier: WebAuthnVerifier { WebAuthnVerifier(relyingParty: options.relyingParty) }

    /// The refusal every denied passkey gets alike; the reason goes to the log and, where an account is known (the
    /// passkey's, or the one the challenge was for), to the audit log as `passkey.refused`. A credential no account
    /// has writes no entry: a stranger's made-up passkeys cannot fill the log.
    func passkeyDenied(_ error: WebAuthnError, accountId: String?) async -> ServiceError {
        logger.info("passkey refused", metadata: [
            "konto.account_id": "\(accountId ?? "-")", "konto.webauthn_code": "\(error.code.rawValue)", "konto.webauthn_detail": "\(error.detail)",
        ])
        if let accountId {
            let record = AuditRecord.failure("passkey.refused", accountId: accountId, reason: "webauthn.\(error.code.rawValue)", at: clock())
            do {
                try await storage.appendAudit([record])
            } catch {
                // The refusal stands either way; only its entry is missing.
                logger.warning("passkey refusal not audited", metadata: ["konto.account_id": "\(accountId)", "konto.error": "\(error)"])
            }
        }
        return Self.wrongCredentials
    }

    static func passkeyRefused(_ error: WebAuthnError) -> ServiceError {
        ServiceError(AccountError(code: .validationFailed, fields: [
            AccountFieldError(key: "credential", code: .passkeyRefused, message: "The passkey was refused: \(error.detail) (webauthn.\(error.code.rawValue))."),
        ]))
    }

    static func credentialId(_ text: String) throws(WebAuthnError) -> [UInt8] {
        guard text.utf8.count <= 2 * AuthenticatorData.maximumCredentialIdLength else { throw WebAuthnError(.tooLarge, "a credential ID over 1023 bytes") }
        let bytes = try Base64URL.decode(text, "the credential's rawId")
        guard !bytes.isEmpty, bytes.count <= AuthenticatorData.maximumCredentialIdLength else {
            throw WebAuthnError(.malformed, "a credential ID of \(bytes.count) bytes")
        }
        return bytes
    }

    static func passkeyName(_ name: String?) throws(ServiceError) -> String {
        let trimmed = (name ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= 64, !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ServiceError(AccountError(code: .validationFailed, fields: [
                AccountFieldError(key: "name", code: .valueTooLarge, message: "Name the passkey in at most 64 characters, without control characters."),
            ]))
        }
        return trimmed.isEmpty ? "Passkey" : trimmed
    }

    static func descriptors(_ factors: [StoredFactor]) -> [PasskeyDescriptor] {
        factors.compactMap { factor in
            guard factor.kind == .passkey, factor.confirmed, let id = factor.credentialId else { return nil }
            return PasskeyDescriptor(id: Base64URL.encode(id))
        }
    }
}
