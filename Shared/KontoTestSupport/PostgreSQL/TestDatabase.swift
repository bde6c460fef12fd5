import Foundation
import Logging
import NIOCore
import PostgresNIO

/// Fresh databases for tests, each on a server shared by the tests that run at the same time.
///
/// The server is `KONTO_TEST_DATABASE_URL` when set; otherwise a ``TemporaryPostgresCluster``
/// that starts with the first test that asks and stops when the last one running finishes.
public enum TestDatabase {
    /// Runs `body` with a new, empty database that is dropped afterwards.
    public static func withFreshDatabase<Result: Sendable>(
        logger: Logger = Logger(label: "konto.testing.postgres"),
        _ body: (PostgresTestDatabase) async throws -> Result
    ) async throws -> Result {
        let server = try await SharedTestServer.shared.acquire(logger: logger)
        let database: PostgresTestDatabase
        do {
            database = try await createDatabase(on: server, logger: logger)
        } catch {
            await SharedTestServer.shared.release()
            throw error
        }

        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await body(database))
        } catch {
            result = .failure(error)
        }
        // Dropping is best effort: the database is unique and the cluster goes away anyway.
        try? await dropDatabase(database.database, on: server, logger: logger)
        await SharedTestServer.shared.release()
        return try result.get()
    }

    /// Runs `body` with a running `PostgresClient` for `database`.
    public static func withClient<Result: Sendable>(
        _ database: PostgresTestDatabase,
        logger: Logger = Logger(label: "konto.testing.postgres"),
        _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
        // The pool warns when a lease comes before `run()` has started, which is routine here.
        var backgroundLogger = logger
        backgroundLogger.logLevel = max(logger.logLevel, .error)
        let client = PostgresClient(configuration: database.clientConfiguration, backgroundLogger: backgroundLogger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// Creates a uniquely named database on `server`.
    public static func createDatabase(on server: PostgresTestDatabase, logger: Logger) async throws -> PostgresTestDatabase {
        let name = "konto_test_" + TemporaryPostgresCluster.randomHex(bytes: 8)
        // Identifiers cannot be bind parameters; the name is ours and only [a-z0-9_].
        try await maintenance(on: server, logger: logger) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""), logger: logger)
        }
        return server.with(database: name)
    }

    public static func dropDatabase(_ name: String, on server: PostgresTestDatabase, logger: Logger) async throws {
        precondition(name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") })
        try await maintenance(on: server, logger: logger) { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)"), logger: logger)
        }
    }

    private static func maintenance(
        on server: PostgresTestDatabase,
        logger: Logger,
        _ body: (PostgresConnection) async throws -> Void
    ) async throws {
        let connection = try await PostgresConnection.connect(
            configuration: server.connectionConfiguration,
            id: 1,
            logger: logger
        )
        do {
            try await body(connection)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}

/// The server behind ``TestDatabase``: counts its users so the temporary cluster stops when the
/// last one is done, and starts again if more tests come later.
actor SharedTestServer {
    static let shared = SharedTestServer()

    private enum State {
        case idle
        case starting(Task<TemporaryPostgresCluster, any Error>)
        case running(TemporaryPostgresCluster)
        case stopping(Task<Void, Never>)
    }

    private var state = State.idle
    private var users = 0

    func acquire(logger: Logger) async throws -> PostgresTestDatabase {
        if let url = ProcessInfo.processInfo.environment["KONTO_TEST_DATABASE_URL"], !url.isEmpty {
            return try PostgresTestDatabase(url: url)
        }
        users += 1
        do {
            return try await runningCluster(logger: logger).maintenanceDatabase
        } catch {
            users -= 1
            throw error
        }
    }

    func release() async {
        if let url = ProcessInfo.processInfo.environment["KONTO_TEST_DATABASE_URL"], !url.isEmpty { return }
        users -= 1
        guard users == 0, case .running(let cluster) = state else { return }
        let stopping = Task<Void, Never> { try? await cluster.destroy() }
        state = .stopping(stopping)
        await stopping.value
        if case .stopping = state { state = .idle }
    }

    private func runningCluster(logger: Logger) async throws -> TemporaryPostgresCluster {
        while true {
            switch state {
            case .running(let cluster):
                return cluster
            case .starting(let task):
                return try await task.value
            case .stopping(let task):
                await task.value
                if case .stopping = state { state = .idle }
            case .idle:
                let task = Task { try await TemporaryPostgresCluster.start(logger: logger) }
                state = .starting(task)
                do {
                    let cluster = try await task.value
                    state = .running(cluster)
                    return cluster
                } catch {
                    state = .idle
                    throw error
                }
            }
        }
    }
}
