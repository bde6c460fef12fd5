import Foundation
import KontoContracts
import KontoModel
import Logging

extension SecondFactors {
    /// Enters the password again, a second factor's code, or both: a fresh session, privileged for the window,
    /// replaces the presented one (whose token stops working at once), keeping its expiry. With a code the session is
    /// `aal2` (what security-related operations of an account with second factors need); with the password alone,
    /// `aal1`; with a passkey, `aal2` only where its authenticator verified the user or the password came with it (a
    /// passkey alone, unverified, is one factor: something held).
    /// - Throws: `account.wrongCredentials` (counted like a failed login, or per account for codes),
    ///   `account.throttled`, `account.validationFailed` when nothing is given.
    func reauthenticate(_ request: IdentityReauthenticateRequest) async throws(ServiceError) -> IdentityPrivilege {
        let now = clock()
        let session = try await sessions.validSession(request.token, at: now)
        let secondFactor = request.code != nil || request.recoveryCode != nil || request.credential != nil
        guard request.password != nil || secondFactor else {
            throw ServiceError(AccountError(code: .validationFailed, fields: [
                AccountFieldError(key: PasswordKey.identifier, code: .missingAccountValue, message: "Enter the password, a code or use a passkey."),
            ]))
        }
        if let password = request.password {
            try await sessions.verifyPassword(password, accountId: session.accountId, at: now)
        }
        var twoFactors = secondFactor
        if let credential = request.credential {
            guard request.code == nil, request.recoveryCode == nil else { throw Self.oneSecondFactor }
            let (_, userVerified) = try await verifyPasskeyAssertion(credential, for: session.accountId, challengeAccount: nil, requireUserVerification: false, at: now)
            twoFactors = userVerified || request.password != nil
            if twoFactors { try await factorShownRight(session.accountId) }
        } else if secondFactor {
            _ = try await verifySecondFactor(accountId: session.accountId, code: request.code, recoveryCode: request.recoveryCode, at: now)
        }
        let until = now.adding(options.privilegedWindow)
        let token = SecretToken.generate()
        var replacement = session
        replacement.id = UUID().uuidString.lowercased()
        replacement.tokenHash = SecretToken.hash(token)
        replacement.privilegedUntil = until
        replacement.assuranceLevel = twoFactors ? 2 : 1
        try await stored { () async throws(IdentityStorageError) in try await storage.replaceSession(id: session.id, with: replacement) }
        return IdentityPrivilege(
            privilegedUntil: until,
            session: IdentitySession(token: BearerToken(token), expiresAt: replacement.absoluteExpiresAt)
        )
    }

    /// A security-related operation's gate: the session is privileged, or the request carries the right password.
    /// With a second factor enrolled, neither is enough: the privileged window must be `aal2` (opened with the
    /// second factor, at login or by reauthentication).
    /// - Throws: `account.reauthenticationRequired` when neither, `account.wrongCredentials` for a wrong password,
    ///   `account.secondFactorRequired` when the window is not `aal2` and must be.
    func authorizeSecurityOperation(_ session: StoredSession, currentPassword: SecretString?, at now: Timestamp) async throws(ServiceError) {
        // A current password that is given is checked, even within the privileged window: a wrong one is never
        // silently ignored.
        if let currentPassword {
            try await sessions.verifyPassword(currentPassword, accountId: session.accountId, at: now)
        }
        if try await demandsSecondFactor(session.accountId) {
            guard session.isPrivileged(at: now), session.assuranceLevel >= 2 else {
                throw ServiceError(AccountError(code: .secondFactorRequired))
            }
            return
        }
        if currentPassword != nil { return }
        guard session.isPrivileged(at: now) else {
            throw ServiceError(AccountError(code: .reauthenticationRequired))
        }
    }
}
