import ArgumentParser
import Crypto
import Foundation
import IdentityService
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// `konto-bench admin`: the operators' account search by userId substring (`identity.searchAccounts` over the wire,
/// the operator key checked on every call) on a table of a million accounts loaded with SQL, one query after another;
/// beside it, in the same run, the same searches through Identity's storage alone (its SQL over postgres-nio). The
/// target is docs/ADMIN.md's: p99 under 50 ms, reported as ratio = 50 ms / p99.
struct AdminBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "Account search by userId substring over the wire on 1,000,000 accounts (p99 vs 50 ms), beside the storage alone."
    )

    static let secret = "konto-bench-admin-secret-0123456789abcdef"

    @Option(help: "Accounts in the table.") var rows: Int = 1_000_000
    @Option(help: "Searches per run (after 50 to warm up).") var queries: Int = 400
    @Option(help: "Runs of each side, alternating; medians are reported.") var runs: Int = 3
    @Option(help: "Characters of each searched substring (taken from a random account's userId).") var length: Int = 6

    func run() async throws {
        guard (1_000...5_000_000).contains(rows), (50...10_000).contains(queries), (1...9).contains(runs), (3...20).contains(length) else {
            throw ValidationError("bounded runs only: rows 1,000–5,000,000, queries 50–10,000, runs 1–9, length 3–20")
        }
        var logger = Logger(label: "konto.bench")
        logger.logLevel = .warning
        let cluster = try await TemporaryPostgresCluster.start(logger: logger)
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
            let started = ContinuousClock.now
            try await seed(database, logger: logger)
            let loadSeconds = Self.milliseconds(ContinuousClock.now - started) / 1_000
            let (wire, storage, matches) = try await measure(database, logger: logger)
            report(wire: wire, storage: storage, matches: matches, loadSeconds: loadSeconds)
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    /// userIds like `3f9a2c1d7b.123456@mail.example.org`: a random-looking part (md5 of the row), the row, a domain.
    static func userIdSQL(_ row: String) -> String {
        "substr(md5(\(row)::text), 1, 10) || '.' || \(row) || '@' || (ARRAY['example.org', 'mail.example.org', 'uni.example.edu'])[\(row) % 3 + 1]"
    }

    /// Identity's schema through its own migrations (the trigram index included), then the rows, then ANALYZE.
    private func seed(_ database: PostgresTestDatabase, logger: Logger) async throws {
        try await TestDatabase.withClient(database, logger: logger) { client in
            try await PostgresIdentityStorage(client: client, logger: logger).migrate()
            let batch = 100_000
            for start in stride(from: 1, through: rows, by: batch) {
                let end = min(start + batch - 1, rows)
                try await client.query(PostgresQuery(unsafeSQL: """
                    INSERT INTO identity.credentials (account_id, user_id, normalized_user_id, password_hash, pending, created_at)
                    SELECT 'acc-' || i, \(Self.userIdSQL("i")), lower(\(Self.userIdSQL("i"))), 'unused', false,
                           now() - (i || ' seconds')::interval
                    FROM generate_series(\(start), \(end)) AS i
                    """), logger: logger)
            }
            try await client.query("VACUUM ANALYZE identity.credentials", logger: logger)
        }
    }

    struct Sample {
        var p50: Double
        var p99: Double
        var max: Double
    }

    /// The searched texts: `length` characters from the random-looking part of random rows' userIds (each finds about
    /// one account).
    private func texts(seed: UInt64, count: Int) -> [String] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let row = Int(generator.next() % UInt64(rows)) + 1
            let md5 = Insecure.MD5.hash(data: Array("\(row)".utf8)).map { String(format: "%02x", $0) }.joined()
            let start = Int(generator.next() % UInt64(10 - min(length, 10) + 1))
            let local = md5.prefix(10) + ".\(row)"
            return String(Array(local)[start..<min(start + length, local.count)])
        }
    }

    private func measure(_ database: PostgresTestDatabase, logger: Logger) async throws -> ([Sample], [Sample], Double) {
        let settings = PostgresSettings(
            host: database.host, port: database.port, username: database.username, password: database.password, database: database.database
        )
        let key = OperatorKeyText.generate()
        var configuration = IdentityServiceConfiguration(port: 0, secret: WireSecret(Self.secret), database: settings, profilePort: 1)
        configuration.hashing = PasswordHashingPool.Configuration(parameters: Argon2Parameters(memoryKiB: 1_024, iterations: 1, parallelism: 1), threads: 1)
        configuration.options.bootstrapOperatorKey = key
        let server = try IdentityServer(configuration: configuration, logger: logger)
        return try await RunningServices.with([server], logger: logger) {
            let port = try await server.localAddress().port!
            let client = WireClient(
                configuration: .init(port: port, serviceName: WireAllowList.gateway, serverName: IdentityContract.serviceName, secret: WireSecret(Self.secret)),
                logger: logger
            )
            return try await RunningServices.with([client], logger: logger) {
                try await TestDatabase.withClient(database, logger: logger) { postgres in
                    let storage = PostgresIdentityStorage(client: postgres, logger: logger)
                    let call = IdentityOperatorCall(key: SecretString(key.text))
                    var wire: [Sample] = [], direct: [Sample] = []
                    var found = 0, asked = 0
                    for run in 0..<runs {
                        let texts = texts(seed: UInt64(run + 1), count: queries + 50)
                        var latencies: [Double] = []
                        for (index, text) in texts.enumerated() {
                            let start = ContinuousClock.now
                            let page = try await client.call(IdentityContract.searchAccounts, IdentityAccountSearchRequest(operatorCall: call, userIdContains: text, limit: 50))
                            if index >= 50 {
                                latencies.append(Self.milliseconds(ContinuousClock.now - start))
                                found += page.accounts.isEmpty ? 0 : 1
                                asked += 1
                            }
                        }
                        wire.append(Self.sample(latencies))
                        latencies = []
                        for (index, text) in texts.enumerated() {
                            let start = ContinuousClock.now
                            _ = try await storage.searchAccounts(AccountSearch(userIdContains: text, limit: 50), countLimit: IdentityAccountSearchPage.exactCountLimit)
                            if index >= 50 { latencies.append(Self.milliseconds(ContinuousClock.now - start)) }
                        }
                        direct.append(Self.sample(latencies))
                    }
                    return (wire, direct, Double(found) / Double(max(asked, 1)))
                }
            }
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
    }

    static func sample(_ latencies: [Double]) -> Sample {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)] }
        return Sample(p50: percentile(0.50), p99: percentile(0.99), max: sorted.last ?? 0)
    }

    private func report(wire: [Sample], storage: [Sample], matches: Double, loadSeconds: Double) {
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print("identity.searchAccounts (userIdContains, \(length) characters, limit 50) over the wire vs Identity's storage alone, \(rows) accounts, \(runs) alternating runs × \(queries) searches")
        print("  run  wire p50 ms  wire p99 ms  wire max ms  storage p50 ms  storage p99 ms")
        for index in 0..<runs {
            print(String(format: "  %3d  %11.2f  %11.2f  %11.2f  %14.2f  %14.2f", index + 1, wire[index].p50, wire[index].p99, wire[index].max, storage[index].p50, storage[index].p99))
        }
        let p99 = median(wire.map(\.p99))
        print(String(
            format: "konto-bench admin: ratio=%.2f target=1.0 p99_ms=%.2f p50_ms=%.2f storage_p99_ms=%.2f storage_p50_ms=%.2f rows=%d queries=%d found=%.2f load_s=%.0f",
            50 / p99, p99, median(wire.map(\.p50)), median(storage.map(\.p99)), median(storage.map(\.p50)), rows, queries, matches, loadSeconds
        ))
    }
}

