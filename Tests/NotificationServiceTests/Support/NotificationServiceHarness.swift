import Foundation
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NotificationService

/// Notifications running in-process on a real TCP socket, on a fresh PostgreSQL database or in memory, with wire
/// clients (one per simulated consumer process).
enum NotificationServiceHarness {
    static let secret = "notifications-test-secret-0123456789"
    static let logger: Logger = {
        var logger = Logger(label: "konto.notifications.test")
        logger.logLevel = .critical
        return logger
    }()

    /// Quick retries and timeouts, so tests of them take milliseconds.
    static var quickOptions: NotificationOptions {
        var options = NotificationOptions()
        // Longer than any test runs on a loaded machine: a redelivery is then never a timeout's doing.
        options.visibilityTimeout = .seconds(300)
        options.maxAttempts = 3
        options.retryBase = .milliseconds(20)
        options.retryMaximum = .milliseconds(100)
        options.pollInterval = .milliseconds(100)
        return options
    }

    struct Running: Sendable {
        let server: NotificationServer
        let port: Int

        /// A new client, as another process would have.
        func client(connections: Int = 1) -> WireClient {
            var configuration = WireClient.Configuration(port: port, serviceName: "notifications-test", serverName: NotificationsContract.serviceName, secret: WireSecret(NotificationServiceHarness.secret))
            configuration.connectionCount = connections
            configuration.requestTimeout = .seconds(15)
            configuration.connectTimeout = .seconds(15)  // the whole suite's load can push a handshake past production's 3 s
            return WireClient(configuration: configuration, logger: NotificationServiceHarness.logger)
        }
    }

    static func withService<Result: Sendable>(
        _ kind: NotificationStorageKind,
        options: NotificationOptions = quickOptions,
        webhooks: [WebhookEndpoint] = [],
        configure: @escaping @Sendable (inout NotificationServiceConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (Running) async throws -> Result
    ) async throws -> Result {
        switch kind {
        case .inMemory:
            return try await run(database: nil, options: options, webhooks: webhooks, configure: configure, body)
        case .postgres:
            return try await TestDatabase.withFreshDatabase { database in
                let settings = PostgresSettings(host: database.host, port: database.port, username: database.username, password: database.password, database: database.database)
                return try await run(database: settings, options: options, webhooks: webhooks, configure: configure, body)
            }
        }
    }

    /// Runs `body` against a service over `database` (in memory when nil), e.g. a database on a server the test stops
    /// and starts itself.
    static func run<Result: Sendable>(
        database: PostgresSettings?, options: NotificationOptions, webhooks: [WebhookEndpoint],
        configure: @Sendable (inout NotificationServiceConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (Running) async throws -> Result
    ) async throws -> Result {
        var configuration = NotificationServiceConfiguration(port: 0, secret: WireSecret(secret), database: database, options: options, webhooks: webhooks)
        // These tests publish, consume, read feeds and dead letters from one client; who may call which is
        // WireAllowListTests' (and the process and end-to-end suites run the real list).
        configuration.authorization = .allowingEveryone
        configuration.ownership = .open
        configure(&configuration)
        let server = try NotificationServer(configuration: configuration, logger: logger)
        return try await RunningServices.with([server], logger: logger) {
            let port = try await server.localAddress().port!
            return try await body(Running(server: server, port: port))
        }
    }

    /// Runs `body` with a running client.
    static func with<Result: Sendable>(_ client: WireClient, _ body: @Sendable () async throws -> Result) async throws -> Result {
        try await RunningServices.with([client], logger: logger, body)
    }

    static func event(_ accountId: String, _ kind: AccountEvent.Kind = .passwordChanged, at time: Date = Date()) -> AccountEvent {
        AccountEvent(time: time, accountId: accountId, kind: kind)
    }
}

/// The code of the wire error a call ended with (nil when it succeeded).
func wireErrorCode(_ body: () async throws -> some Any) async -> KontoErrorCode? {
    do {
        _ = try await body()
        return nil
    } catch let error as WireError {
        return error.code
    } catch {
        return KontoErrorCode(rawValue: "not-a-wire-error: \(error)")
    }
}
