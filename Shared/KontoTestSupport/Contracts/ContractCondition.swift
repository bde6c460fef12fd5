import Foundation
import KontoWire
import Logging
import NIOCore
import PostgresNIO

/// A condition of a provider's surroundings that an example's answer depends on (the example's `given`): the provider
/// test brings it about for real before the request and ends it afterwards, so an answer such as
/// `profile.storageUnavailable` is the service's own, not a stub's.
///
/// Conditions used by the examples: `storageDown` (the service's PostgreSQL server is stopped), `storageBroken` (the
/// service's tables are gone: its schema renamed away), `profileDown` (the Profile service Identity calls is stopped)
/// and `hashersBusy` (every password-hashing thread is taken and no call may queue); and `resetTokenMailed`,
/// `verificationTokenMailed` and `signInCodeMailed`, which only supply a value the service sent elsewhere than in its answers.
public struct ContractCondition: Sendable {
    public var establish: @Sendable () async throws -> Void
    public var end: @Sendable () async throws -> Void
    /// Values the condition makes known once established, for the examples' `$given:NAME:KIND` (by NAME).
    public var supply: @Sendable () async throws -> [String: String]

    public init(
        establish: @escaping @Sendable () async throws -> Void,
        end: @escaping @Sendable () async throws -> Void,
        supply: @escaping @Sendable () async throws -> [String: String] = { [:] }
    ) {
        self.establish = establish
        self.end = end
        self.supply = supply
    }

    public static let storageDown = "storageDown"
    public static let storageBroken = "storageBroken"
    public static let profileDown = "profileDown"
    public static let hashersBusy = "hashersBusy"
    /// Not a fault: the last password reset token Identity sent out (in its `passwordResetRequested` event, for the
    /// mail sender) is supplied as `reset-token`.
    public static let resetTokenMailed = "resetTokenMailed"
    /// Not a fault: the token of the last link Identity sent to confirm an address (in a `mailRequested` event, for
    /// the courier) is supplied as `verification-token`, the code beside it as `verification-code`.
    public static let verificationTokenMailed = "verificationTokenMailed"
    /// Not a fault: the last sign-in code Identity mailed (in a `mailRequested` event) is supplied as `sign-in-code`.
    public static let signInCodeMailed = "signInCodeMailed"
    /// Not a fault: fresh ID tokens of the provider test's identity provider, each for the same new nonce, supplied
    /// as `id-token` (subject `contract-user`, a vouched-for address), `id-token-bare` (subject `contract-bare`, no
    /// address), `id-token-linked` (subject `contract-linked`, minted for the web client), and `nonce`.
    public static let idTokenIssued = "idTokenIssued"

    /// The conditions that need a database; a provider on in-memory storage cannot have them.
    public static let storageConditions: Set<String> = [storageDown, storageBroken]

    /// Stops `cluster` (fast shutdown: the service's connections end) and starts it again afterwards.
    ///
    /// The condition holds once the service itself reports its storage not ready (`health`): an outage it has
    /// noticed, as every request after the first few of an outage sees it. (A service whose pool waits for a
    /// connection until its circuit breaker opens takes that long to notice.) It ends once the service reports
    /// ready again: its pool reconnects on its own schedule.
    public static func storageDown(_ cluster: TemporaryPostgresCluster, health client: WireClient) -> ContractCondition {
        ContractCondition(
            establish: {
                try await cluster.stop()
                try await waitUntil({ await healthStatus(client) == "notReady" }, what: "the service to notice its database is down")
            },
            end: {
                try await cluster.start()
                try await waitUntil({ await healthStatus(client) == "ready" }, what: "the service to serve again after its database came back")
            }
        )
    }

    /// Runs `body` with a fresh database on a PostgreSQL server of its own, which the body may stop and start (the
    /// shared test server must keep serving every other test).
    public static func withDedicatedDatabase<Result: Sendable>(
        logger: Logger = Logger(label: "konto.testing.contracts"),
        _ body: (TemporaryPostgresCluster, PostgresTestDatabase) async throws -> Result
    ) async throws -> Result {
        let cluster = try await TemporaryPostgresCluster.start(logger: logger)
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
            let result = try await body(cluster, database)
            try await cluster.destroy()
            return result
        } catch {
            try? await cluster.destroy()
            throw error
        }
    }

    /// Renames the service's schema away, so every statement fails as with a dropped table, and back afterwards.
    public static func storageBroken(_ database: PostgresTestDatabase, schema: String, logger: Logger = Logger(label: "konto.testing.contracts")) -> ContractCondition {
        precondition(schema.allSatisfy { $0.isASCII && ($0.isLowercase || $0 == "_") })
        // Identifiers cannot be bind parameters; the names are ours.
        let away = "\(schema)_away_for_contract"
        return ContractCondition(
            establish: { try await execute("ALTER SCHEMA \"\(schema)\" RENAME TO \"\(away)\"", on: database, logger: logger) },
            end: { try await execute("ALTER SCHEMA \"\(away)\" RENAME TO \"\(schema)\"", on: database, logger: logger) }
        )
    }

    /// The status of a service's `health.check` report (`ready`, `notReady`), nil when it does not answer.
    public static func healthStatus(_ client: WireClient) async -> String? {
        guard let answer = try? await client.callRaw("health.check", payload: ByteBuffer(string: "{}")),
              let report = try? JSONSerialization.jsonObject(with: Data(answer.readableBytesView)) as? [String: Any]
        else { return nil }
        return report["status"] as? String
    }

    /// Polls `condition` (bounded): recovery from an outage has no event to await.
    public static func waitUntil(_ condition: @Sendable () async -> Bool, what: String, within bound: Duration = .seconds(150)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + bound
        while !(await condition()) {
            guard clock.now < deadline else { throw ContractExampleError("gave up waiting for \(what) after \(bound)") }
            // A poll interval, so a check that fails at once does not spin.
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    private static func execute(_ sql: String, on database: PostgresTestDatabase, logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(configuration: database.connectionConfiguration, id: 1, logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
