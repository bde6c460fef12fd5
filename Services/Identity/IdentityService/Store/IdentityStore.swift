import Foundation
import KontoContracts
import KontoModel
import KontoWire
import Logging

/// Identity's operations (SpeziAccount's UserIdPasswordAccountService), independent of the wire: sign-up, login,
/// sessions, security-related operations and password reset, over an ``IdentityStorage``, a
/// ``PasswordHashingPool`` and a ``ProfileProvider``.
///
/// - No enumeration: an unknown userId is hashed against a dummy with the same parameters and answers the very
///   same `account.wrongCredentials` as a wrong password; a reset request answers the same either way. Sign-up's
///   `account.credentialsTaken` is the only place existence shows.
/// - Failed logins count per userId and per client address in the storage, shared by every replica.
/// - No half-made accounts: sign-up reserves the userId, stores the details through Profile, then activates; when
///   Profile fails the reservation is dropped at once and the profile deleted after ``IdentityOptions/profileCleanupDelay``.
public final class IdentityStore: Sendable {
    public let configuration: AccountConfiguration
    public let options: IdentityOptions
    let storage: any IdentityStorage
    let hashing: PasswordHashingPool
    let profile: any ProfileProvider
    /// What login and sign-up answer with: the account as every path puts it together.
    let assembler: AccountAssembler
    /// Seals each reset token into its event for the delivering channel.
    let resetTokenSeal: ResetTokenSeal
    /// Seals TOTP secrets for storage.
    let factorSecrets: FactorSecretBox
    let clock: @Sendable () -> Timestamp
    let logger: Logger
    /// The configured external identity providers, and Konto as their client.
    let providers: ProviderClient
    /// Seals provider refresh tokens and pending external sign-ups.
    let providerTokens: ProviderTokenBox
    /// What answers do not wait for (a sign-in code's mail).
    public let pendingWork = PendingWork()

    /// - Parameter clock: the current time; tests move it to expire sessions and tokens.
    public init(
        storage: any IdentityStorage,
        hashing: PasswordHashingPool,
        profile: any ProfileProvider,
        configuration: AccountConfiguration,
        options: IdentityOptions = IdentityOptions(),
        resetTokenSeal: ResetTokenSeal,
        factorSecrets: FactorSecretBox,
        providers: ProviderClient? = nil,
        providerTokens: ProviderTokenBox? = nil,
        clock: @escaping @Sendable () -> Timestamp = { .now },
        logger: Logger
    ) {
        self.providers = providers ?? ProviderClient(providers: .none, clock: clock, logger: logger)
        // Without a box from the deployment's secret nothing it seals has to outlive the process.
        self.providerTokens = providerTokens ?? ProviderTokenBox(secret: WireSecret(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) }))
        self.resetTokenSeal = resetTokenSeal
        self.factorSecrets = factorSecrets
        self.storage = storage
        self.hashing = hashing
        self.profile = profile
        self.configuration = configuration
        self.assembler = AccountAssembler(configuration: configuration)
        self.options = options
        self.clock = clock
        self.logger = logger
    }

    // MARK: Helpers shared by the operations

    /// A storage call, its failures turned into the service's errors.
    func stored<T>(_ body: () async throws(IdentityStorageError) -> T) async throws(ServiceError) -> T {
        do {
            return try await body()
        } catch {
            throw Self.error(for: error)
        }
    }

    static func error(for error: IdentityStorageError) -> ServiceError {
        switch error.code {
        case .unavailable: .identityStorageUnavailable
        case .notFound: ServiceError(AccountError(code: .notFound))
        case .conflict: ServiceError(AccountError(code: .credentialsTaken))
        case .failure: .identityStorageFailure
        }
    }

    /// A new session for the account under its credential's version, privileged for the window when a password was
    /// just entered.
    func makeSession(accountId: String, credentialVersion: Int64, privileged: Bool, assuranceLevel: Int = 1, at now: Timestamp) -> (session: StoredSession, token: String) {
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
            assuranceLevel: assuranceLevel
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

    static let unauthenticated = ServiceError(AccountError(code: .unauthenticated))
    static let wrongCredentials = ServiceError(AccountError(code: .wrongCredentials))
    static let wrongSecondFactor = ServiceError(AccountError(code: .wrongSecondFactor))

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

    static let passwordTooLong = ServiceError(AccountError(code: .validationFailed, fields: [passwordTooLongField]))
    static let passwordTooLongField = AccountFieldError(
        key: PasswordKey.identifier,
        code: .valueTooLarge,
        message: "Use at most \(PasswordHashingPool.maximumPasswordCharacters) characters."
    )

    func event(_ accountId: String, _ kind: AccountEvent.Kind, at now: Timestamp) -> AccountEvent {
        AccountEvent(time: now.date, accountId: accountId, kind: kind)
    }
}

