import ArgumentParser
import Foundation
import IdentityService
import KontoContracts
import KontoPostgres
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// `konto-bench session`: `identity.validateSession` over the wire against PostgreSQL, next to pgbench running the
/// same session lookup (sessions joined with credentials by token hash) on the same database, same client count.
struct SessionBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Identity validateSession over the wire vs pgbench's token-hash SELECT (loopback)."
    )

    static let secret = "konto-bench-session-secret-0123456789abcdef"

    @Option(help: "Connections (wire) and clients (pgbench).")
    var connections: Int = 16

    @Option(help: "Runs of each side, alternating; medians are reported.")
    var runs: Int = 3

    @Option(help: "Seconds measured per run (after a 1 s warm-up).")
    var seconds: Int = 5

    @Option(help: "Sessions in the table.")
    var rows: Int = 10_000

    @Option(help: "pgbench query protocol: simple, extended or prepared.")
    var pgbenchProtocol: String = "extended"

    @Option(help: "Event loop threads of the Identity service.")
    var serverThreads: Int = System.coreCount

    @Option(help: "Load generator event loop threads.")
    var loadThreads: Int = 1

    func run() async throws {
        guard (1...256).contains(connections), (1...9).contains(runs), (1...60).contains(seconds), (1...1_000_000).contains(rows) else {
            throw ValidationError("bounded runs only: connections 1–256, runs 1–9, seconds 1–60, rows up to 1,000,000")
        }
        let pgbench = try ProfileBenchmark.locatePgbench()
        var logger = Logger(label: "konto.bench")
        logger.logLevel = .warning
        let cluster = try await TemporaryPostgresCluster.start(logger: logger)
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
            try await seed(database, logger: logger)
            let baseline = try ProfileBenchmark.Pgbench(
                executable: pgbench,
                database: database,
                script: """
                    \\set n random(1, \(rows))
                    SELECT s.id, s.account_id, s.created_at, s.idle_expires_at, s.absolute_expires_at, s.privileged_until, c.normalized_user_id IS NULL
                    FROM identity.sessions s JOIN identity.credentials c ON c.account_id = s.account_id AND NOT c.pending
                    WHERE s.token_hash = sha256(convert_to('bench-token-' || :n, 'UTF8'));

                    """,
                connections: connections,
                seconds: seconds,
                queryProtocol: pgbenchProtocol
            )
            defer { baseline.removeScript() }
            try await baseline.warmUp()
            let (ours, theirs) = try await measure(database: database, baseline: baseline, logger: logger)
            report(ours: ours, pgbench: theirs)
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    private func seed(_ database: PostgresTestDatabase, logger: Logger) async throws {
        try await Self.seed(database, rows: rows, logger: logger)
    }

    /// Migrates through Identity's own storage, then fills the tables: one account per session, tokens
    /// `bench-token-<n>` stored as SHA-256, as Identity stores them (`konto-bench oidc`'s callers' sessions too).
    static func seed(_ database: PostgresTestDatabase, rows: Int, logger: Logger) async throws {
        try await TestDatabase.withClient(database, logger: logger) { client in
            try await PostgresIdentityStorage(client: client, logger: logger).migrate()
            try await client.query("""
                INSERT INTO identity.credentials (account_id, user_id, normalized_user_id, password_hash, pending, created_at)
                SELECT 'acc-' || i, 'user' || i || '@example.com', 'user' || i || '@example.com', 'unused', false, now()
                FROM generate_series(1, \(rows)) AS i
                """, logger: logger)
            try await client.query("""
                INSERT INTO identity.sessions (id, account_id, token_hash, created_at, idle_expires_at, absolute_expires_at)
                SELECT 'session-' || i, 'acc-' || i, sha256(convert_to('bench-token-' || i, 'UTF8')), now(),
                       now() + interval '7 days', now() + interval '30 days'
                FROM generate_series(1, \(rows)) AS i
                """, logger: logger)
            try await client.query("ANALYZE identity.sessions", logger: logger)
            try await client.query("ANALYZE identity.credentials", logger: logger)
        }
    }

    /// Ours and pgbench take turns, run by run, so drift on a shared machine affects both alike.
    private func measure(
        database: PostgresTestDatabase,
        baseline: ProfileBenchmark.Pgbench,
        logger: Logger
    ) async throws -> ([ProfileBenchmark.Sample], [ProfileBenchmark.PgbenchSample]) {
        let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: serverThreads)
        let loadGroup = MultiThreadedEventLoopGroup(numberOfThreads: loadThreads)
        do {
            let result = try await measure(database: database, baseline: baseline, serverGroup: serverGroup, loadGroup: loadGroup, logger: logger)
            try await loadGroup.shutdownGracefully()
            try await serverGroup.shutdownGracefully()
            return result
        } catch {
            try? await loadGroup.shutdownGracefully()
            try? await serverGroup.shutdownGracefully()
            throw error
        }
    }

    private func measure(
        database: PostgresTestDatabase,
        baseline: ProfileBenchmark.Pgbench,
        serverGroup: MultiThreadedEventLoopGroup,
        loadGroup: MultiThreadedEventLoopGroup,
        logger: Logger
    ) async throws -> ([ProfileBenchmark.Sample], [ProfileBenchmark.PgbenchSample]) {
        let settings = PostgresSettings(
            host: database.host, port: database.port, username: database.username, password: database.password, database: database.database
        )
        var configuration = IdentityServiceConfiguration(port: 0, secret: WireSecret(Self.secret), database: settings, profilePort: 1)
        configuration.hashing = PasswordHashingPool.Configuration(parameters: Argon2Parameters(memoryKiB: 1_024, iterations: 1, parallelism: 1), threads: 1)
        let server = try IdentityServer(configuration: configuration, eventLoopGroup: serverGroup, logger: logger)
        let runs = self.runs
        let seconds = self.seconds
        let connections = self.connections
        let payloads = try (1...rows).map { row in
            ByteBuffer(bytes: try JSONEncoder().encode(IdentitySessionRequest(token: BearerToken("bench-token-\(row)"))))
        }
        return try await RunningServices.with([server], logger: logger) {
            let port = try await server.localAddress().port!
            let target = WireLoadGenerator.Target(port: port, secret: Self.secret, serviceName: WireAllowList.gateway, serverName: IdentityContract.serviceName)
            var samples: [ProfileBenchmark.Sample] = []
            var theirs: [ProfileBenchmark.PgbenchSample] = []
            for run in 0..<runs {
                let result = try await WireLoadGenerator.run(target, connections: connections, warmup: .seconds(1), duration: .seconds(Int64(seconds)), group: loadGroup) { connection in
                    SessionValidationWorkload(payloads: payloads, seed: UInt64(run * 1_000 + connection + 1))
                }
                samples.append(ProfileBenchmark.Sample(
                    callsPerSecond: result.requestsPerSecond,
                    p50: result.latencies.percentileMilliseconds(0.50),
                    p99: result.latencies.percentileMilliseconds(0.99)
                ))
                theirs.append(try await baseline.sample())
            }
            return (samples, theirs)
        }
    }

    private func report(ours: [ProfileBenchmark.Sample], pgbench: [ProfileBenchmark.PgbenchSample]) {
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let rps = median(ours.map(\.callsPerSecond))
        let tps = median(pgbench.map(\.transactionsPerSecond))
        print("identity.validateSession over the wire vs pgbench token-hash SELECT, \(connections) connections, \(runs) alternating runs × \(seconds) s, \(rows) sessions")
        print("  run  ours calls/s    p50 ms   p99 ms   pgbench tps   avg ms")
        for index in 0..<max(ours.count, pgbench.count) {
            let our = index < ours.count ? ours[index] : nil
            let their = index < pgbench.count ? pgbench[index] : nil
            print(String(
                format: "  %3d  %12.0f  %8.3f  %7.3f  %12.0f  %7.3f",
                index + 1, our?.callsPerSecond ?? 0, our?.p50 ?? 0, our?.p99 ?? 0,
                their?.transactionsPerSecond ?? 0, their?.latencyAverage ?? 0
            ))
        }
        print(String(
            format: "konto-bench session: ratio=%.2f target=0.7 rps=%.0f pgbench_tps=%.0f p50_ms=%.3f p99_ms=%.3f pgbench_avg_ms=%.3f connections=%d pgbench_protocol=%@",
            rps / tps, rps, tps, median(ours.map(\.p50)), median(ours.map(\.p99)), median(pgbench.map(\.latencyAverage)), connections, pgbenchProtocol
        ))
    }
}

/// One connection's validations: a random seeded session each time; one answer in 16 is decoded and checked.
final class SessionValidationWorkload: WireWorkload {
    private let payloads: [ByteBuffer]
    private var generator: SplitMix64
    private var lastRow = 0
    private var answers = 0

    init(payloads: [ByteBuffer], seed: UInt64) {
        self.payloads = payloads
        self.generator = SplitMix64(seed: seed)
    }

    func nextRequest() -> WireRequest {
        lastRow = Int(generator.next() % UInt64(payloads.count))
        return WireRequest(method: IdentityContract.validateSession.name, timeoutMilliseconds: 10_000, payload: payloads[lastRow])
    }

    func check(_ response: WireResponse) throws {
        answers += 1
        guard answers % 16 == 1 else { return }
        let info = try JSONDecoder().decode(IdentitySessionInfo.self, from: Data(response.payload.readableBytesView))
        guard info.accountId == "acc-\(lastRow + 1)" else {
            throw ValidationError("validateSession answered \(info.accountId) for session \(lastRow + 1)")
        }
    }
}
