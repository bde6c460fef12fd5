import ArgumentParser
import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ProfileService

/// `konto-bench profile`: load(3 keys) calls per second over the wire against PostgreSQL, next to
/// pgbench running the equivalent primary-key SELECT on the same database at the same client count.
struct ProfileBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile",
        abstract: "Profile load(3 keys) over the wire vs pgbench's primary-key SELECT (loopback)."
    )

    static let secret = "konto-bench-profile-secret-0123456789abcdef"
    static let keys = ["name", "dateOfBirth", "email"]
    static let accounts: AccountConfiguration = AccountConfiguration.default

    @Option(help: "Connections (wire) and clients (pgbench).")
    var connections: Int = 16

    @Option(help: "Runs of each side; medians are reported.")
    var runs: Int = 3

    @Option(help: "Seconds measured per run (after a 1 s warm-up).")
    var seconds: Int = 5

    @Option(help: "Accounts in the table.")
    var rows: Int = 10_000

    @Option(help: "pgbench query protocol: simple, extended or prepared (postgres-nio uses extended).")
    var pgbenchProtocol: String = "extended"

    @Option(help: "Event loop threads of the Profile service.")
    var serverThreads: Int = System.coreCount

    @Option(help: "Load generator event loop threads (pgbench runs with -j 2 here).")
    var loadThreads: Int = 1

    @Option(help: "Use this PostgreSQL server (a role that may create databases) instead of a temporary one.")
    var databaseURL: String?

    @Flag(help: "Also measure the service over in-memory storage (where the time goes without the database).")
    var memoryBaseline = false

    func run() async throws {
        guard (1...256).contains(connections), (1...9).contains(runs), (1...60).contains(seconds), (1...1_000_000).contains(rows) else {
            throw ValidationError("bounded runs only: connections 1–256, runs 1–9, seconds 1–60, rows up to 1,000,000")
        }
        let pgbench = try Self.locatePgbench()
        var logger = Logger(label: "konto.bench")
        logger.logLevel = .warning

        let cluster: TemporaryPostgresCluster? = databaseURL == nil ? try await TemporaryPostgresCluster.start(logger: logger) : nil
        do {
            let server = try databaseURL.map { try PostgresTestDatabase(url: $0) } ?? cluster!.maintenanceDatabase
            let database = try await TestDatabase.createDatabase(on: server, logger: logger)
            try await Self.seed(database, rows: rows, logger: logger)
            // Ours and pgbench take turns, run by run, so drift on a shared machine affects both alike.
            let baseline = try Pgbench(executable: pgbench, database: database, benchmark: self)
            defer { baseline.removeScript() }
            try await baseline.warmUp()
            var theirs: [PgbenchSample] = []
            let ours = try await measureOurs(serverArguments: ["--database-url", database.url], logger: logger) {
                theirs.append(try await baseline.sample())
            }
            let memory = memoryBaseline
                ? try await measureOurs(serverArguments: ["--memory-rows", "\(rows)"], logger: logger) {}
                : []
            try? await TestDatabase.dropDatabase(database.database, on: server, logger: logger)
            report(ours: ours, pgbench: theirs, memory: memory)
        } catch {
            try? await cluster?.destroy()
            throw error
        }
        try await cluster?.destroy()
    }

    // MARK: Setup

    static func locatePgbench() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >).map { "/usr/lib/postgresql/\($0)/bin" }
        // Debian's /usr/bin/pgbench is a perl wrapper; the version directories hold the program itself.
        for directory in versions + path.split(separator: ":").map(String.init) {
            let candidate = directory + "/pgbench"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ValidationError("pgbench not found (Debian: apt-get install postgresql)")
    }

    /// Migrates through the service's own storage, then fills the table in one statement.
    static func seed(_ database: PostgresTestDatabase, rows: Int, logger: Logger) async throws {
        try await TestDatabase.withClient(database, logger: logger) { client in
            try await PostgresProfileStorage.migrate(client: client, logger: logger)
            try await client.query("""
                INSERT INTO profile.accounts (account_id, version, details)
                SELECT 'acc-' || i, 1, jsonb_build_object(
                    'name', jsonb_build_object('givenName', 'User ' || i, 'familyName', 'Bench'),
                    'dateOfBirth', '1990-01-01',
                    'biography', 'A short biography of user ' || i || ', long enough to be realistic.',
                    'email', 'user' || i || '@example.com',
                    'phoneNumbers', jsonb_build_array('+41 44 000 00 00'))
                FROM generate_series(1, \(rows)) AS i
                """, logger: logger)
            try await client.query("ANALYZE profile.accounts", logger: logger)
        }
    }

    // MARK: Ours

    struct Sample {
        var callsPerSecond: Double
        var p50: Double
        var p99: Double
    }

    /// Runs the service once and measures it `runs` times, calling `between` after each run.
    private func measureOurs(serverArguments: [String], logger: Logger, between: () async throws -> Void) async throws -> [Sample] {
        let server = try ChildProcess.start(
            CommandLine.arguments[0],
            ["profile-server", "--port", "0", "--threads", "\(serverThreads)"] + serverArguments,
            readyPrefix: "READY "
        )
        defer { server.stop() }
        guard let port = Int(server.readyLine.dropFirst("READY ".count)) else {
            throw ValidationError("profile-server did not report its port")
        }
        // Requests are encoded up front, as pgbench prepares its script: the load generator should
        // cost as little as pgbench does, so the figures are the service's.
        let payloads = try (1...rows).map { row in
            ByteBuffer(bytes: try JSONEncoder().encode(ProfileLoadRequest(accountId: "acc-\(row)", keys: Self.keys)))
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: loadThreads)
        do {
            let samples = try await drive(port: port, payloads: payloads, group: group, between: between)
            try await group.shutdownGracefully()
            return samples
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private func drive(port: Int, payloads: [ByteBuffer], group: any EventLoopGroup, between: () async throws -> Void) async throws -> [Sample] {
        let target = WireLoadGenerator.Target(port: port, secret: Self.secret, serviceName: WireAllowList.gateway, serverName: ProfileContract.serviceName)
        var samples: [Sample] = []
        for run in 0..<runs {
            let result = try await WireLoadGenerator.run(
                target,
                connections: connections,
                warmup: .seconds(1),
                duration: .seconds(Int64(seconds)),
                group: group
            ) { connection in
                ProfileLoadWorkload(payloads: payloads, seed: UInt64(run * 1_000 + connection + 1))
            }
            samples.append(Sample(
                callsPerSecond: result.requestsPerSecond,
                p50: result.latencies.percentileMilliseconds(0.50),
                p99: result.latencies.percentileMilliseconds(0.99)
            ))
            try await between()
        }
        return samples
    }

    // MARK: pgbench

    struct PgbenchSample {
        var transactionsPerSecond: Double
        var latencyAverage: Double
    }

    /// pgbench, the baseline: a script run by as many clients as our connections.
    struct Pgbench {
        let executable: String
        let arguments: [String]
        let environment: [String: String]
        let script: URL
        let seconds: Int
        let limit: Duration

        /// pgbench running `script` (its own meta-commands and one query) on `database`.
        init(executable: String, database: PostgresTestDatabase, script text: String, connections: Int, seconds: Int, queryProtocol: String) throws {
            let script = FileManager.default.temporaryDirectory.appendingPathComponent("konto-bench-\(UUID().uuidString).sql")
            try text.write(to: script, atomically: true, encoding: .utf8)
            self.executable = executable
            self.script = script
            self.seconds = seconds
            self.arguments = [
                "-n", "-c", "\(connections)", "-j", "\(min(connections, ProcessInfo.processInfo.activeProcessorCount))",
                "-M", queryProtocol, "-f", script.path,
                "-h", database.host, "-p", "\(database.port)", "-U", database.username, database.database,
            ]
            self.environment = ["PGPASSWORD": database.password ?? ""]
            self.limit = .seconds(seconds * 3 + 30)
        }

        /// The script of one load: the row by primary key, version and details.
        init(executable: String, database: PostgresTestDatabase, benchmark: ProfileBenchmark) throws {
            try self.init(
                executable: executable,
                database: database,
                script: """
                    \\set n random(1, \(benchmark.rows))
                    SELECT version, details FROM profile.accounts WHERE account_id = 'acc-' || :n;

                    """,
                connections: benchmark.connections,
                seconds: benchmark.seconds,
                queryProtocol: benchmark.pgbenchProtocol
            )
        }

        func warmUp() async throws {
            _ = try await ProfileBenchmark.output(executable, arguments + ["-T", "1"], environment: environment, limit: limit)
        }

        func sample() async throws -> PgbenchSample {
            let output = try await ProfileBenchmark.output(executable, arguments + ["-T", "\(seconds)"], environment: environment, limit: limit)
            guard
                let tps = ProfileBenchmark.number(after: "tps = ", in: output),
                let latency = ProfileBenchmark.number(after: "latency average = ", in: output)
            else {
                throw ValidationError("could not read pgbench's output:\n\(output)")
            }
            return PgbenchSample(transactionsPerSecond: tps, latencyAverage: latency)
        }

        func removeScript() {
            try? FileManager.default.removeItem(at: script)
        }
    }

    /// Runs a command to its end (bounded) and returns what it printed.
    static func output(_ executable: String, _ arguments: [String], environment: [String: String], limit: Duration) async throws -> String {
        let process = try ServiceProcess.start(executable, arguments: arguments, environment: environment)
        let status = await process.waitForExit(timeout: limit)
        let output = process.output
        await process.stop()
        guard status == 0 else {
            throw ValidationError("\(executable) failed (status \(status.map(String.init) ?? "timeout")):\n\(output)")
        }
        return output
    }

    static func number(after marker: String, in text: String) -> Double? {
        guard let range = text.range(of: marker) else { return nil }
        return Double(text[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }

    // MARK: Report

    private func report(ours: [Sample], pgbench: [PgbenchSample], memory: [Sample]) {
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let rps = median(ours.map(\.callsPerSecond))
        let p50 = median(ours.map(\.p50))
        let p99 = median(ours.map(\.p99))
        let tps = median(pgbench.map(\.transactionsPerSecond))
        let pgLatency = median(pgbench.map(\.latencyAverage))
        print("profile load(3 keys) over the wire vs pgbench primary-key SELECT, \(connections) connections, \(runs) alternating runs × \(seconds) s, \(rows) rows")
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
        if !memory.isEmpty {
            print(String(
                format: "  same service over in-memory storage: %.0f calls/s, p50 %.3f ms, p99 %.3f ms",
                median(memory.map(\.callsPerSecond)), median(memory.map(\.p50)), median(memory.map(\.p99))
            ))
        }
        print(String(
            format: "konto-bench profile: ratio=%.2f target=0.7 rps=%.0f pgbench_tps=%.0f p50_ms=%.3f p99_ms=%.3f pgbench_avg_ms=%.3f connections=%d pgbench_protocol=%@",
            rps / tps, rps, tps, p50, p99, pgLatency, connections, pgbenchProtocol
        ))
    }
}

/// One benchmark connection's loads: a random account each time, the same three keys. Every
/// answer must be a response frame (the load generator fails the run on an error frame); one in
/// 16 is decoded in full and checked against the account asked for.
final class ProfileLoadWorkload: WireWorkload {
    private let payloads: [ByteBuffer]
    private var generator: SplitMix64
    private var lastRow = 0
    private var answers = 0

    init(payloads: [ByteBuffer], seed: UInt64) {
        self.payloads = payloads
        self.generator = SplitMix64(seed: seed)
    }

    func nextRequest() -> WireRequest {
        self.lastRow = Int(self.generator.next() % UInt64(self.payloads.count))
        return WireRequest(method: ProfileContract.load.name, timeoutMilliseconds: 10_000, payload: self.payloads[self.lastRow])
    }

    func check(_ response: WireResponse) throws {
        self.answers += 1
        guard self.answers % 16 == 1 else { return }
        // The reader the wire client uses for this payload.
        let record = try ProfileRecord(wireJSON: response.payload.readableBytesView)
        guard record.accountId == "acc-\(self.lastRow + 1)", record.details.count == ProfileBenchmark.keys.count else {
            throw ValidationError("load answered \(record.details.count) keys for \(record.accountId)")
        }
    }
}

/// A small deterministic generator: the same account sequence every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
