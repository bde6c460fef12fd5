import Foundation
import IdentityService
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import ProfileService
import Testing

/// Identity and Profile running in-process on real TCP sockets, on one PostgreSQL database (each in its own schema)
/// or in memory, with a wire client of Identity. The tests' composition root: the services themselves never
/// import each other.
enum IdentityServiceHarness {
    static let secret = "identity-test-secret-0123456789-abcdefghij"
    static let logger: Logger = {
        var logger = Logger(label: "konto.identity.test")
        logger.logLevel = .warning
        return logger
    }()

    static let cheap = Argon2Parameters(memoryKiB: 1_024, iterations: 1, parallelism: 1)

    /// Identity's settings for tests: cheap hashing, quick clean-ups.
    /// - Parameter profileTimeout: generous by default, so a loaded machine does not turn into a Profile outage.
    static func configuration(
        database: PostgresSettings?,
        profilePort: Int,
        options: IdentityOptions? = nil,
        profileTimeout: Duration = .seconds(15),
        hashing: PasswordHashingPool.Configuration = PasswordHashingPool.Configuration(parameters: cheap, threads: 2),
        providers: IdentityProviders = .none,
        providerFetcher: (any ProviderFetcher)? = nil
    ) -> IdentityServiceConfiguration {
        var defaults = IdentityOptions()
        defaults.cleanupInterval = .milliseconds(50)
        defaults.profileCleanupDelay = .milliseconds(500)
        var configuration = IdentityServiceConfiguration(
            port: 0,
            secret: WireSecret(secret),
            database: database,
            profilePort: profilePort,
            profileTimeout: profileTimeout,
            hashing: hashing,
            options: options ?? defaults
        )
        configuration.providers = providers
        configuration.providerFetcher = providerFetcher
        return configuration
    }

    static func settings(_ database: PostgresTestDatabase) -> PostgresSettings {
        PostgresSettings(host: database.host, port: database.port, username: database.username, password: database.password, database: database.database)
    }

    /// The running parts a test talks to.
    struct Running: Sendable {
        let identity: WireClient
        let profile: WireClient
        let identityServer: IdentityServer
        /// Where Profile listens; nil after a test stopped it.
        let profilePort: Int
    }

    /// Runs `body` against Identity and Profile over `kind` (PostgreSQL: one fresh database for both).
    static func withServices<Result: Sendable>(
        _ kind: IdentityStorageKind,
        options: IdentityOptions? = nil,
        _ body: @escaping @Sendable (Running) async throws -> Result
    ) async throws -> Result {
        switch kind {
        case .inMemory:
            return try await run(database: nil, options: options, body)
        case .postgres:
            return try await TestDatabase.withFreshDatabase { database in
                try await run(database: settings(database), options: options, body)
            }
        }
    }

    static func run<Result: Sendable>(
        database: PostgresSettings?,
        options: IdentityOptions?,
        _ body: @escaping @Sendable (Running) async throws -> Result
    ) async throws -> Result {
        let profileServer = try ProfileServer(configuration: ProfileServiceConfiguration(port: 0, secret: WireSecret(secret), database: database), logger: logger)
        return try await RunningServices.with([profileServer], logger: logger) {
            let profilePort = try await profileServer.localAddress().port!
            let identityServer = try IdentityServer(configuration: configuration(database: database, profilePort: profilePort, options: options), logger: logger)
            return try await RunningServices.with([identityServer], logger: logger) {
                let identity = client(port: try await identityServer.localAddress().port!, as: WireAllowList.gateway)
                let profile = client(port: profilePort, as: IdentityContract.serviceName, at: ProfileContract.serviceName)
                return try await RunningServices.with([identity, profile], logger: logger) {
                    try await body(Running(identity: identity, profile: profile, identityServer: identityServer, profilePort: profilePort))
                }
            }
        }
    }

    /// Runs `body` against Identity and a Profile that the body may stop and start again (``RestartableProfile``),
    /// over `database` (in memory when nil), with the given hashing pool.
    static func runWithRestartableProfile<Result: Sendable>(
        database: PostgresSettings?,
        options: IdentityOptions?,
        hashing: PasswordHashingPool.Configuration,
        providers: IdentityProviders = .none,
        providerFetcher: (any ProviderFetcher)? = nil,
        storageTimeout: Duration? = nil,
        _ body: @escaping @Sendable (Running, RestartableProfile) async throws -> Result
    ) async throws -> Result {
        let profile = try await RestartableProfile.start(ProfileServiceConfiguration(port: 0, secret: WireSecret(secret), database: database), logger: logger)
        do {
            var identityConfiguration = configuration(
                database: database, profilePort: profile.port, options: options, hashing: hashing, providers: providers, providerFetcher: providerFetcher
            )
            if let storageTimeout { identityConfiguration.storageTimeout = storageTimeout }
            let identityServer = try IdentityServer(configuration: identityConfiguration, logger: logger)
            let result = try await RunningServices.with([identityServer], logger: logger) {
                let identity = client(port: try await identityServer.localAddress().port!, as: WireAllowList.gateway)
                let profileClient = client(port: profile.port, as: IdentityContract.serviceName, at: ProfileContract.serviceName)
                return try await RunningServices.with([identity, profileClient], logger: logger) {
                    try await body(Running(identity: identity, profile: profileClient, identityServer: identityServer, profilePort: profile.port), profile)
                }
            }
            try await profile.stop()
            return result
        } catch {
            try? await profile.stop()
            throw error
        }
    }

    /// A client calling under `caller`'s name: the services here enforce their allow-lists, so a test calls Identity
    /// as the Gateway does, Profile as Identity does, and so on.
    static func client(port: Int, as caller: String, at server: String = IdentityContract.serviceName) -> WireClient {
        var configuration = WireClient.Configuration(port: port, serviceName: caller, serverName: server, secret: WireSecret(secret))
        configuration.requestTimeout = .seconds(10)
        configuration.connectTimeout = .seconds(15)  // the whole suite's load can push a handshake past production's 3 s
        return WireClient(configuration: configuration, logger: logger)
    }
}

extension WireClient {
    func signUp(_ userId: String, password: String = "correct horse battery", details: [String: AccountValue] = ["name": IdentityFixture.name]) async throws -> IdentityAccountSession {
        try await call(IdentityContract.signUp, IdentitySignUpRequest(userId: userId, password: SecretString(password), details: AccountDetails(values: details)))
    }

    func login(_ userId: String, password: String = "correct horse battery", address: String? = nil) async throws -> IdentityAccountSession {
        let answer = try await call(IdentityContract.login, IdentityLoginRequest(userId: userId, password: SecretString(password), clientAddress: address))
        return try #require(answer.accountSession, "the login asked for a second factor")
    }

    func validate(_ token: BearerToken) async throws -> IdentitySessionInfo {
        try await call(IdentityContract.validateSession, IdentitySessionRequest(token: token))
    }
}

/// The code of the wire error a call ended with (nil when it succeeded).
func wireErrorCode(_ body: () async throws -> some Any) async -> KontoErrorCode? {
    await wireError(body)?.code
}

func wireError(_ body: () async throws -> some Any) async -> WireError? {
    do {
        _ = try await body()
        return nil
    } catch let error as WireError {
        return error
    } catch {
        return WireError(code: KontoErrorCode(rawValue: "not-a-wire-error"), message: "\(error)")
    }
}
