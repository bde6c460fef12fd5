import KontoContracts
import KontoModel

extension AccountOpener {
    /// Makes an account for an operator (docs/ADMIN.md, "Creating and importing accounts"), by the sign-up's own
    /// opening (userId reserved, details to Profile, then activated, each step undone when a later one fails) but
    /// with no session, no remembered client and no verification mail. The details are checked as a sign-up's, except
    /// that server-owned keys may be set. A password is hashed (its rules apply); an imported hash is stored as given
    /// once it reads as one of the schemes Konto verifies, within their cost bounds, and is replaced by argon2id at the
    /// first successful sign-in; with neither, the account has no password until its owner sets one.
    func createAccount(_ request: IdentityCreateAccountRequest) async throws(ServiceError) -> IdentityManagedAccount {
        guard request.password == nil || request.passwordHash == nil else {
            throw Operators.invalid("Send a password or a password hash, not both.")
        }
        var imported: PasswordHash?
        if let text = request.passwordHash {
            guard text.utf8Count <= IdentityCreateAccountRequest.maximumHashLength else { throw Operators.invalid(PasswordHash.ImportRefusal.unreadable.message) }
            switch PasswordHash.imported(text.value) {
            case .success(let hash): imported = hash
            case .failure(let refusal): throw Operators.invalid(refusal.message)
            }
        }
        let userId = UserIdNormalization.trimmed(request.userId)
        let details = try checkSignUp(userId: userId, password: request.password, details: request.details, byOperator: true)
        let normalizedUserId = UserIdNormalization.normalized(userId, type: configuration.userIdType)
        let now = clock()
        if try await stored({ () async throws(IdentityStorageError) in try await storage.credential(normalizedUserId: normalizedUserId) }) != nil {
            throw ServiceError(AccountError(code: .credentialsTaken))
        }
        var hash = imported?.encoded
        if let password = request.password {
            hash = try await sessions.hashing { try await sessions.hashing.hash(password.value) }.encoded
        }
        let opened = try await open(
            AccountOpening(
                credential: hash.map { .password(hash: $0) } ?? .none, userId: userId, normalizedUserId: normalizedUserId, details: details,
                addressVerified: request.verified, startsSession: false, mailsVerification: false
            ),
            at: now
        )
        let credential = opened.credential
        return IdentityManagedAccount(
            record: IdentityAccountRecord(
                facts: opened.facts, createdAt: credential.createdAt, hasPassword: credential.passwordHash != nil, lastSignInAt: nil,
                verifiedAt: credential.emailVerifiedAt, factors: [], identities: [], sessionCount: 0
            ),
            profile: opened.profile
        )
    }
}
