@testable import IdentityService
import KontoContracts
import KontoModel
import KontoWire
import Logging
import Testing

/// An ``IdentityStore`` over in-memory storage, a test Profile and a hand-moved clock, with cheap hashing.
struct IdentityFixture {
    let storage: any IdentityStorage
    let profile = TestProfileProvider()
    let clock = TestClock()
    let hashing: PasswordHashingPool
    let store: IdentityStore
    /// What the store records into (the audit chain's head).
    let metrics: IdentityMetrics

    /// The seal of the tests' deployment secret (IdentityServiceHarness.secret), so tests open the tokens they read.
    static let seal = ResetTokenSeal(secret: WireSecret(IdentityServiceHarness.secret))
    static let factorSecrets = FactorSecretBox(secret: WireSecret(IdentityServiceHarness.secret))
    static let providerTokens = ProviderTokenBox(secret: WireSecret(IdentityServiceHarness.secret))
    static let cheap = Argon2Parameters(memoryKiB: 1_024, iterations: 1, parallelism: 1)
    /// The built-in configuration (SpeziAccount's default) requires a name.
    static let name: AccountValue = .object(["givenName": .string("Leland"), "familyName": .string("Stanford")])

    init(
        storage: any IdentityStorage = InMemoryIdentityStorage(),
        configuration: AccountConfiguration = .default,
        options: IdentityOptions = IdentityOptions(),
        parameters: Argon2Parameters = Self.cheap,
        hashingThreads: Int = 2,
        maxQueued: Int = 64,
        providers: ProviderClient? = nil,
        metrics: IdentityMetrics = IdentityMetrics(),
        logger: Logger = Logger(label: "test.identity")
    ) throws {
        self.storage = storage
        self.metrics = metrics
        self.hashing = try PasswordHashingPool(configuration: .init(parameters: parameters, threads: hashingThreads, maxQueued: maxQueued))
        self.store = IdentityStore(
            storage: storage,
            hashing: hashing,
            profile: profile,
            configuration: configuration,
            options: options,
            resetTokenSeal: Self.seal,
            factorSecrets: Self.factorSecrets,
            providers: providers,
            providerTokens: Self.providerTokens,
            metrics: metrics,
            clock: clock.function,
            logger: logger
        )
    }

    func signUp(
        _ userId: String = "leland@stanford.edu",
        password: String = "correct horse battery",
        details: [String: AccountValue] = ["name": IdentityFixture.name]
    ) async throws -> IdentityAccountSession {
        try await store.signUp(IdentitySignUpRequest(userId: userId, password: SecretString(password), details: AccountDetails(values: details)))
    }

    func login(_ userId: String = "leland@stanford.edu", password: String = "correct horse battery", address: String? = "192.0.2.1") async throws -> IdentityAccountSession {
        let answer = try await store.login(IdentityLoginRequest(userId: userId, password: SecretString(password), clientAddress: address))
        return try #require(answer.accountSession, "the login asked for a second factor")
    }

    /// A login's answer as it is: a session, or a second-factor challenge.
    func loginAnswer(_ userId: String = "leland@stanford.edu", password: String = "correct horse battery", address: String? = "192.0.2.1") async throws -> IdentityLoginAnswer {
        try await store.login(IdentityLoginRequest(userId: userId, password: SecretString(password), clientAddress: address))
    }

    /// The owner confirms the account's address from `signedUp`'s session with the link Identity mailed (its token
    /// opened as the courier opens it): the owner's first proof, which ends nothing.
    func confirmAddress(_ signedUp: IdentityAccountSession) async throws {
        for event in try await events().reversed() where event.accountId == signedUp.accountId {
            if case let .mailRequested(request) = event.kind, request.message == .verifyEmail, let sealed = request.sealedToken {
                let token = try Self.seal.open(sealed, accountId: signedUp.accountId)
                _ = try await store.confirmEmailVerification(IdentityConfirmEmailVerificationRequest(token: BearerToken(token), session: signedUp.session.token))
                return
            }
        }
        Issue.record("no verification mail for \(signedUp.accountId)")
    }

    func validate(_ token: BearerToken) async throws -> IdentitySessionInfo {
        try await store.validateSession(IdentitySessionRequest(token: token))
    }

    func events() async throws -> [AccountEvent] {
        try await storage.pendingEvents(limit: 1_000)
    }
}

/// The error a call threw, as an ServiceError (nil when it succeeded or threw something else).
func identityError(_ body: () async throws -> some Any) async -> ServiceError? {
    do {
        _ = try await body()
        return nil
    } catch let error as ServiceError {
        return error
    } catch {
        return nil
    }
}
