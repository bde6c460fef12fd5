import Crypto
import Foundation
import KontoContracts
import KontoModel
import KontoWebAuthn
import Logging

extension SignIn {
    /// Completes a login with the second factor: the challenge a correct password gave and a TOTP or recovery code.
    /// The session is `aal2` and privileged for the window.
    /// - Throws: `account.invalidChallenge` (unknown, used or expired), `account.wrongSecondFactor` (a wrong, replayed
    ///   or out-of-window code), `account.throttled` (wrong codes per account, across replicas).
    func completeSecondFactor(_ request: IdentitySecondFactorRequest) async throws(ServiceError) -> IdentityAccountSession {
        let now = clock()
        guard request.challenge.value.utf8.count <= 256 else { throw Self.invalidChallenge }
        let tokenHash = SecretToken.hash(request.challenge.value)
        // Each answer, right or wrong, takes one of the challenge's few (a wrong code also counts per account below).
        let allowing = options.challengeAnswers
        guard let challenge = try await stored({ () async throws(IdentityStorageError) in
            try await storage.answerChallenge(tokenHash: tokenHash, at: now, allowing: allowing)
        }) else {
            throw Self.invalidChallenge
        }
        let accountId = challenge.accountId
        var remaining: Int?
        if let credential = request.credential {
            guard request.code == nil, request.recoveryCode == nil else { throw Self.oneSecondFactor }
            do {
                _ = try await factors.verifyPasskeyAssertion(credential, for: accountId, challengeAccount: accountId, requireUserVerification: false, at: now)
            } catch where error.code == AccountError.Code.wrongCredentials {
                // The password was right; it is the second factor that was not.
                throw Self.wrongSecondFactor
            }
            try await factors.factorShownRight(accountId)
        } else {
            remaining = try await factors.verifySecondFactor(accountId: accountId, code: request.code, recoveryCode: request.recoveryCode, at: now)
        }
        let credential = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }
        guard let credential, credential.credentialVersion == challenge.credentialVersion, credential.disabledAt == nil else { throw Self.invalidChallenge }
        let signedIn = try await signedInDetails(credential)
        let (session, token) = sessions.makeSession(accountId: accountId, credentialVersion: challenge.credentialVersion, privileged: true, assuranceLevel: 2, method: "secondFactor", at: now)
        let completed: Bool
        do {
            completed = try await storage.completeChallenge(tokenHash: tokenHash, at: now, session: session, events: [event(accountId, .associatedAccount, at: now)])
        } catch where error.code == .notFound {
            throw Self.invalidChallenge
        } catch {
            throw Self.error(for: error)
        }
        // Used by a concurrent completion in the meantime: one challenge, one session.
        guard completed else { throw Self.invalidChallenge }
        await mail.rememberSignIn(accountId: accountId, clients: sessions.clientHashes(address: request.clientAddress, device: request.clientDevice), method: "a second factor", at: now)
        logger.debug("logged in with a second factor", metadata: ["konto.account_id": "\(accountId)", "konto.session_id": "\(session.id)"])
        return IdentityAccountSession(
            session: IdentitySession(token: BearerToken(token), expiresAt: session.absoluteExpiresAt),
            details: signedIn.details, account: signedIn.facts, recoveryCodesRemaining: remaining
        )
    }

    // MARK: Signing in

    /// Options for a passwordless login (or a reauthentication): any of the site's passkeys, the user verified.
    func passkeyLoginOptions(_ request: IdentityPasskeyOptionsRequest) -> PasskeyRequestOptions {
        let now = clock()
        let challenge = PasskeyChallenge.make(.assertion, accountId: nil, expiresAt: now.adding(options.challengeLifetime), key: factors.factorSecrets.challengeKey)
        return PasskeyRequestOptions(
            challenge: Base64URL.encode(challenge), timeout: Int(options.challengeLifetime.milliseconds),
            rpId: options.relyingParty.id, allowCredentials: [], userVerification: "required"
        )
    }

    /// A passwordless login: a passkey whose authenticator verified the user, over a challenge from
    /// ``passkeyLoginOptions(_:)``. The session is `aal2` and privileged for the window.
    /// - Throws: `account.wrongCredentials` for any passkey that does not sign in (the reason is logged, not told).
    func passkeyLogin(_ request: IdentityPasskeyLoginRequest) async throws(ServiceError) -> IdentityAccountSession {
        let now = clock()
        let (factor, _) = try await factors.verifyPasskeyAssertion(request.credential, for: nil, challengeAccount: nil, requireUserVerification: true, at: now)
        let accountId = factor.accountId
        let credential = try await stored { () async throws(IdentityStorageError) in try await storage.credential(accountId: accountId) }
        guard let credential, credential.userId != nil, credential.disabledAt == nil else { throw Self.wrongCredentials }
        let signedIn = try await signedInDetails(credential)
        let (session, token) = sessions.makeSession(accountId: accountId, credentialVersion: credential.credentialVersion, privileged: true, assuranceLevel: 2, method: "passkey", at: now)
        do {
            try await storage.createSession(session, events: [event(accountId, .associatedAccount, at: now)])
        } catch where error.code == .notFound {
            throw Self.wrongCredentials
        } catch {
            throw Self.error(for: error)
        }
        await mail.rememberSignIn(accountId: accountId, clients: sessions.clientHashes(address: request.clientAddress, device: request.clientDevice), method: "a passkey", at: now)
        logger.debug("logged in with a passkey", metadata: ["konto.account_id": "\(accountId)", "konto.session_id": "\(session.id)"])
        return IdentityAccountSession(
            session: IdentitySession(token: BearerToken(token), expiresAt: session.absoluteExpiresAt), details: signedIn.details, account: signedIn.facts
        )
    }
}
