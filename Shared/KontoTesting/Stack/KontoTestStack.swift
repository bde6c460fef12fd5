import Foundation
import KontoClient
import KontoModel
import KontoPostgres
import KontoStack
import Logging
import ServiceLifecycle

/// A whole Konto — Identity, Profile, Notifications and the Gateway — in this process on free loopback ports, for a
/// downstream project's tests (SpeziAccount's XCTSpeziAccount, for a backend): in memory unless a database is given.
///
/// ```swift
/// try await withStack { client in
///     try await client.signUp(email: "ada@example.org", name: PersonName(givenName: "Ada"))
///     #expect(try await client.account()[\.name]?.givenName == "Ada")
/// }
/// ```
public struct KontoTestStack: Sendable {
    /// The gateway's base URL (`http://127.0.0.1:PORT`).
    public let gatewayURL: String

    /// A password every rule of the default schema accepts; the helpers' default.
    public static let password = "correct horse battery staple"
    /// The name the kit signs up with unless given: the built-in configuration, like SpeziAccount's default, requires one.
    public static let name = PersonName(givenName: "Test", familyName: "User")

    /// Another client of this stack, with a session of its own (another user, or the same user's other device).
    public func makeClient() -> KontoClient {
        KontoClient(gatewayURL: gatewayURL)
    }
}

/// Runs `body` with a client of a stack started for it, and stops the stack gracefully afterwards (also when
/// `body` throws). `accounts` is the deployment's schema; `database`, PostgreSQL instead of memory.
@discardableResult
public func withStack<Result: Sendable>(
    accounts: AccountConfiguration = .default,
    database: PostgresSettings? = nil,
    logger: Logger = Logger(label: "konto.test-stack", factory: { _ in SwiftLogNoOpLogHandler() }),
    _ body: (KontoClient) async throws -> Result
) async throws -> Result {
    try await withStack(accounts: accounts, database: database, logger: logger) { client, _ in try await body(client) }
}

/// ``withStack(accounts:database:logger:_:)-(_,_,_,(KontoClient)->_)`` with the stack too, for more clients.
@discardableResult
public func withStack<Result: Sendable>(
    accounts: AccountConfiguration = .default,
    database: PostgresSettings? = nil,
    logger: Logger = Logger(label: "konto.test-stack", factory: { _ in SwiftLogNoOpLogHandler() }),
    _ body: (KontoClient, KontoTestStack) async throws -> Result
) async throws -> Result {
    var configuration = DevStack.Configuration()
    // Production's hashing on a test machine running many suites at once can take longer than production's 5 s
    // upstream limit; a test waits rather than failing with 503.
    configuration.environment["KONTO_GATEWAY_UPSTREAM_TIMEOUT_MS"] = "30000"
    configuration.accounts = accounts
    configuration.database = database
    configuration.gatewayPort = try FreePort.loopback()
    configuration.identityPort = try FreePort.loopback()
    configuration.profilePort = try FreePort.loopback()
    configuration.notificationsPort = try FreePort.loopback()
    let stack = try DevStack(configuration: configuration, logger: logger)
    let group = stack.serviceGroup(logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        do {
            // The gateway starts last, after the services it depends on: listening, the stack is ready.
            let address = try await stack.gatewayAddress()
            let testStack = KontoTestStack(gatewayURL: "http://\(address.host):\(address.port)")
            let result = try await body(testStack.makeClient(), testStack)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}

extension KontoClient {
    /// Signs up with an email address as the userId, the test kit's password unless given, and details. The name is
    /// `name`, else the one in `details`, else ``KontoTestStack/name`` (`signUp(userId:password:details:)` sends
    /// exactly what it is given).
    @discardableResult
    public func signUp(
        email: String,
        password: String = KontoTestStack.password,
        name: PersonName? = nil,
        details: AccountDetails = AccountDetails()
    ) async throws -> KontoSignIn {
        var details = details
        if let name {
            details[\.name] = name
        } else if details[\.name] == nil {
            details[\.name] = KontoTestStack.name
        }
        return try await signUp(userId: email, password: password, details: details)
    }

    /// Logs in with an email address as the userId and the test kit's password unless given.
    @discardableResult
    public func logIn(email: String, password: String = KontoTestStack.password) async throws -> KontoSignIn {
        try await logIn(userId: email, password: password)
    }
}
