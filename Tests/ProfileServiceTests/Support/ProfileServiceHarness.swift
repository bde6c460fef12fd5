import Foundation
import KontoContracts
import KontoModel
import KontoPostgres
import KontoRuntime
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import ProfileService

/// A running Profile service (in-process, real TCP) and a wire client connected to it.
enum ProfileServiceHarness {
    static let secret = "profile-test-secret-0123456789-abcdefghij"
    static let logger: Logger = {
        var logger = Logger(label: "konto.profile.test")
        logger.logLevel = .warning
        return logger
    }()

    /// The configuration the contract examples are recorded with.
    static func contractAccounts() throws -> AccountConfiguration {
        try AccountConfigurationLoader(logger: logger).load(path: contractAccountsPath())
    }

    static func contractAccountsPath() throws -> String {
        // This file is Tests/ProfileServiceTests/Support/…
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return tests.appendingPathComponent("Contracts/profile/accounts.yaml").path
    }

    /// Runs `body` with a client of a Profile service over `storage` (PostgreSQL: a fresh database).
    static func withService<Result: Sendable>(
        storage: StorageKind,
        accounts: AccountConfiguration,
        _ body: @escaping @Sendable (WireClient, ProfileServer) async throws -> Result
    ) async throws -> Result {
        switch storage {
        case .inMemory:
            return try await run(database: nil, accounts: accounts, body)
        case .postgres:
            return try await TestDatabase.withFreshDatabase { database in
                let settings = PostgresSettings(
                    host: database.host,
                    port: database.port,
                    username: database.username,
                    password: database.password,
                    database: database.database
                )
                return try await run(database: settings, accounts: accounts, body)
            }
        }
    }

    /// Runs `body` with a client of a Profile service over `database` (in memory when nil), e.g. a database on a server
    /// the test stops and starts itself.
    static func run<Result: Sendable>(
        database: PostgresSettings?,
        accounts: AccountConfiguration,
        store: ProfileStoreOptions = ProfileStoreOptions(),
        _ body: @escaping @Sendable (WireClient, ProfileServer) async throws -> Result
    ) async throws -> Result {
        var configuration = ProfileServiceConfiguration(port: 0, secret: WireSecret(secret), database: database, accounts: accounts, store: store)
        // These tests drive every Profile method from one client; who may call which is WireAllowListTests' (and the
        // process and end-to-end suites run the real list).
        configuration.authorization = .allowingEveryone
        let server = try ProfileServer(configuration: configuration, logger: logger)
        return try await RunningServices.with([server], logger: logger) {
            let port = try await server.localAddress().port!
            let client = WireClient(
                configuration: {
                    var configuration = WireClient.Configuration(port: port, serviceName: "profile-test", serverName: ProfileContract.serviceName, secret: WireSecret(secret))
                    configuration.connectTimeout = .seconds(15)  // the whole suite's load can push a handshake past production's 3 s
                    return configuration
                }(),
                logger: logger
            )
            return try await RunningServices.with([client], logger: logger) {
                try await body(client, server)
            }
        }
    }
}
