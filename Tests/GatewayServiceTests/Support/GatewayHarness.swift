import AsyncHTTPClient
import Foundation
import GatewayConsole
import GatewayService
import IdentityService
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTesting
import KontoWire
import Logging
import NIOCore
import NIOHTTP1
import NotificationService
import ProfileService
#if canImport(Glibc)
import Glibc
#endif

/// The gateway in front of real Identity, Profile and Notifications on one fresh PostgreSQL database, all on
/// loopback sockets in this process, and an HTTP client. The tests' composition root: the services never import
/// each other.
enum GatewayHarness {
    static let secret = "gateway-test-secret-0123456789-abcdefghij"
    static let logger: Logger = {
        var logger = Logger(label: "konto.gateway.test")
        logger.logLevel = .warning
        return logger
    }()

    struct Running: Sendable {
        var baseURL: String
        let http: HTTPClient
        /// Where the gateway finds the services (to reach them behind its back).
        var identityPort: Int?
        var profilePort: Int?
        var notificationsPort: Int?
        /// The admin listener's base URL, when it is on (``GatewayConfiguration/adminPort``).
        var adminURL: String?
        /// The database every service uses (`konto admin keys create` is run against it).
        var databaseURL: String?

        /// A wire client to a service the gateway calls, calling as the gateway does (the services enforce their
        /// allow-lists), running for `body`.
        func withService<Result: Sendable>(port: Int?, server: String, _ body: @escaping @Sendable (WireClient) async throws -> Result) async throws -> Result {
            let port = try port ?? { throw HarnessError("no service port") }()
            let client = WireClient(configuration: .init(port: port, serviceName: WireAllowList.gateway, serverName: server, secret: WireSecret(GatewayHarness.secret)), logger: GatewayHarness.logger)
            return try await RunningServices.with([client], logger: GatewayHarness.logger) { try await body(client) }
        }

        /// The value of a metric line as `/metrics` writes it (`name` or `name{label="…",…}`), if there is one.
        func metric(_ series: String) async throws -> Double? {
            let text = try await request(.GET, "/metrics").text
            let line = text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") }
        }

        /// One request; the body read whole (bounded).
        func request(
            _ method: HTTPMethod,
            _ path: String,
            json: String? = nil,
            token: String? = nil,
            headers: [(String, String)] = []
        ) async throws -> HTTPAnswer {
            var request = HTTPClientRequest(url: baseURL + path)
            request.method = method
            if let json {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: json))
            }
            if let token {
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
            }
            for (name, value) in headers {
                request.headers.replaceOrAdd(name: name, value: value)
            }
            let response = try await http.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 20)
            return HTTPAnswer(status: Int(response.status.code), headers: response.headers, body: Data(body.readableBytesView))
        }

        /// Repeats a request until its status is `status` (a service restarting), for at most 60 s.
        func eventually(_ status: Int, _ method: HTTPMethod, _ path: String, token: String? = nil) async throws -> HTTPAnswer {
            let deadline = ContinuousClock.now + .seconds(60)
            while true {
                let answer = try await request(method, path, token: token)
                if answer.status == status || ContinuousClock.now > deadline { return answer }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        /// Signs up and returns the session token and accountId.
        func signUp(_ userId: String, password: String = "correct horse battery", details: String = #"{"name":{"givenName":"Leland","familyName":"Stanford"}}"#) async throws -> (token: String, accountId: String) {
            let answer = try await request(.POST, "/v1/accounts", json: #"{"userId":"\#(userId)","password":"\#(password)","details":\#(details)}"#)
            guard answer.status == 201, let token = answer.object["session"].flatMap({ ($0 as? [String: Any])?["token"] as? String }),
                  let accountId = answer.object["accountId"] as? String
            else {
                throw HarnessError("sign-up answered \(answer.status): \(answer.text)")
            }
            return (token, accountId)
        }
    }

    struct HTTPAnswer: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: Data

        var text: String { String(decoding: body, as: UTF8.self) }
        var object: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
        var code: String? { object["code"] as? String }
        var contentType: String? { headers.first(name: "Content-Type") }
    }

    struct HarnessError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func settings(_ database: PostgresTestDatabase) -> PostgresSettings {
        PostgresSettings(host: database.host, port: database.port, username: database.username, password: database.password, database: database.database)
    }

    /// Runs `body` against the whole system on a fresh database, every service with `accounts`.
    static func withGateway<Result: Sendable>(
        configure: @escaping @Sendable (inout GatewayConfiguration) -> Void = { _ in },
        identityOptions: IdentityOptions = IdentityOptions(),
        accounts: AccountConfiguration = .default,
        providers: IdentityProviders = .none,
        configureNotifications: @escaping @Sendable (inout NotificationServiceConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (Running) async throws -> Result
    ) async throws -> Result {
        try await TestDatabase.withFreshDatabase { database in
            let settings = settings(database)
            let databaseURL = database.url
            var notificationsConfiguration = NotificationServiceConfiguration(port: 0, secret: WireSecret(secret), database: settings)
            configureNotifications(&notificationsConfiguration)
            let notifications = try NotificationServer(configuration: notificationsConfiguration, logger: logger)
            return try await RunningServices.with([notifications], logger: logger) {
                let notificationsPort = try await notifications.localAddress().port!
                // Profile relays detailsChanged to Notifications and consumes deletingAccount from it.
                let profile = try ProfileServer(
                    configuration: ProfileServiceConfiguration(
                        port: 0, secret: WireSecret(secret), database: settings, accounts: accounts, notificationsHost: "127.0.0.1", notificationsPort: notificationsPort
                    ),
                    logger: logger
                )
                return try await RunningServices.with([profile], logger: logger) {
                    let profilePort = try await profile.localAddress().port!
                    return try await withIdentity(settings: settings, profilePort: profilePort, notificationsPort: notificationsPort, options: identityOptions, accounts: accounts, providers: providers) { identityPort in
                        var configuration = GatewayConfiguration(
                            port: 0,
                            secret: WireSecret(secret),
                            identity: .init(host: "127.0.0.1", port: identityPort),
                            profile: .init(host: "127.0.0.1", port: profilePort),
                            notifications: .init(host: "127.0.0.1", port: notificationsPort),
                            accounts: accounts
                        )
                        configuration.upstreamTimeout = .seconds(15)
                        configure(&configuration)
                        return try await withGateway(configuration) { running in
                            var running = running
                            running.databaseURL = databaseURL
                            return try await body(running)
                        }
                    }
                }
            }
        }
    }

    private static func withIdentity<Result: Sendable>(
        settings: PostgresSettings,
        profilePort: Int,
        notificationsPort: Int,
        options: IdentityOptions,
        accounts: AccountConfiguration,
        providers: IdentityProviders,
        _ body: @escaping @Sendable (Int) async throws -> Result
    ) async throws -> Result {
        var configuration = IdentityServiceConfiguration(
            port: 0,
            secret: WireSecret(secret),
            database: settings,
            profilePort: profilePort,
            profileTimeout: .seconds(15),
            notificationsHost: "127.0.0.1",
            notificationsPort: notificationsPort,
            hashing: PasswordHashingPool.Configuration(parameters: Argon2Parameters(memoryKiB: 1_024, iterations: 1, parallelism: 1), threads: 2)
        )
        configuration.options = options
        configuration.accounts = accounts
        configuration.providers = providers
        let identity = try IdentityServer(configuration: configuration, logger: logger)
        return try await RunningServices.with([identity], logger: logger) {
            try await body(try await identity.localAddress().port!)
        }
    }

    static func withGateway<Result: Sendable>(
        _ configuration: GatewayConfiguration,
        _ body: @escaping @Sendable (Running) async throws -> Result
    ) async throws -> Result {
        let gateway = try GatewayServer.withConsole(configuration: configuration, logger: logger)
        return try await RunningServices.with([gateway], logger: logger) {
            let port = try await gateway.localAddress().port!
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                var running = Running(baseURL: "http://127.0.0.1:\(port)", http: http, identityPort: configuration.identity.port, profilePort: configuration.profile.port, notificationsPort: configuration.notifications.port)
                if configuration.adminPort != nil {
                    running.adminURL = "http://127.0.0.1:\(try await gateway.localAdminAddress().port!)"
                }
                let result = try await body(running)
                try await http.shutdown()
                return result
            } catch {
                try? await http.shutdown()
                throw error
            }
        }
    }

    /// The four executables as separate processes on loopback and one fresh database, the topology of
    /// docker-compose; `body` gets the gateway and the processes (to stop and restart).
    static func withProcesses<Result: Sendable>(
        environment additions: [String: String] = [:],
        _ body: @escaping @Sendable (Running, KontoProcessStack) async throws -> Result
    ) async throws -> Result {
        try await TestDatabase.withFreshDatabase(logger: logger) { database in
            let stack = try KontoProcessStack(databaseURL: database.url, environment: [
                "KONTO_NOTIFICATIONS_POLL_MS": "100",
                "KONTO_GATEWAY_UPSTREAM_TIMEOUT_MS": "3000",
                "KONTO_GATEWAY_RATE_LIMIT_PER_MINUTE": "0",
                "KONTO_GATEWAY_CREDENTIALS_RATE_LIMIT_PER_MINUTE": "0",
            ].merging(additions) { $1 })
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                let running = Running(baseURL: stack.gatewayURL, http: http)
                _ = try await running.eventually(200, .GET, "/health/ready")
                let result = try await body(running, stack)
                try await http.shutdown()
                await stack.stopAll()
                return result
            } catch {
                try? await http.shutdown()
                await stack.stopAll()
                throw error
            }
        }
    }
}
