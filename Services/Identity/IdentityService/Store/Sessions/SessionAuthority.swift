import Foundation
import KontoContracts
import KontoModel
import KontoWire
import Logging

/// Sessions and the password check: makes, finds and ends sessions, checks a signed-in caller's password, and keeps
/// the failure counts that throttle sign-ins (per userId, per client address, per known client) in the shared
/// storage. Over the credentials' storage alone.
struct SessionAuthority: IdentityPart {
    let context: IdentityContext
    let storage: any CredentialStorage
    let hashing: PasswordHashingPool
    /// Keys the digests clients are known by, and the client address's throttling key.
    let factorSecrets: FactorSecretBox

    /// A new session for the account under its credential's version, privileged for the window when a password was
    /// just entered. It keeps how it was signed in (`method`) and, from the call's scope, the client's network and
    /// name (``SessionClient``), for its owner's list of sessions.
    func makeSession(
        accountId: String, credentialVersion: Int64, privileged: Bool, assuranceLevel: Int = 1, method: String, at now: Timestamp
    ) -> (session: StoredSession, token: String) {
        let client = AuditScope.current
        let token = SecretToken.generate()
        let absolute = now.adding(options.sessionLifetime)
        let session = StoredSession(
            id: UUID().uuidString.lowercased(),
            accountId: accountId,
            tokenHash: SecretToken.hash(token),
            createdAt: now,
            idleExpiresAt: min(now.adding(options.sessionIdleTimeout), absolute),
            absoluteExpiresAt: absolute,
            privilegedUntil: privileged ? now.adding(options.privilegedWindow) : nil,
            credentialVersion: credentialVersion,
            assuranceLevel: assuranceLevel,
            lastUsedAt: now,
            signInMethod: method,
            clientAddress: SessionClient.coarse(address: client?.clientAddress),
            clientName: client?.clientName
        )
        return (session, token)
    }

    /// The session a token names, valid at `now`.
    /// - Throws: `account.unauthenticated` for an unknown, ended or expired session (the same for each).
    func validSession(_ token: BearerToken, at now: Timestamp) async throws(ServiceError) -> StoredSession {
        // A token is 43 characters; anything far longer is not one and is not hashed.
        guard token.value.utf8.count <= 256 else { throw Self.unauthenticated }
        let hash = SecretToken.hash(token.value)
        guard let session = try await stored({ () async throws(IdentityStorageError) in try await storage.session(tokenHash: hash) }),
              session.isValid(at: now)
        else { throw Self.unauthenticated }
        return session
    }

    /// Identity's facts about a session's account, as the lookup found it with the session.
    func facts(of session: StoredSession) throws(ServiceError) -> IdentityAccountFacts {
        guard let account = session.account else { throw Self.unauthenticated }
        return account.facts(userIdType: configuration.userIdType)
    }

    /// Runs a password hash or verification on the pool; a full pool is `identity.busy`.
    func hashing<T>(_ body: () async throws -> T) async throws(ServiceError) -> T {
        do {
            return try await body()
        } catch let error as ServiceError {
            throw error
        } catch is PasswordTooLong {
            throw Self.passwordTooLong
        } catch {
            logger.error("password hashing failed", metadata: ["konto.error": "\(String(reflecting: type(of: error)))"])
            throw ServiceError(code: WireError.Code.internalError, message: "Password hashing failed.")
        }
    }
}
