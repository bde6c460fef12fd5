import ArgumentParser
import Foundation
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NIOPosix
import NotificationService
import PostgresNIO
import Synchronization

/// `konto-bench events`: durable events end to end (publish → stored → delivered to a consumer group → acked) over
/// the wire against PostgreSQL, next to pgbench running the queue's bare SQL (insert a row; claim-and-delete one
/// with `FOR UPDATE SKIP LOCKED`) on the same database. Then latency at a steady rate.
struct EventsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Notifications events/s end to end vs pgbench's insert + SKIP LOCKED claim; p50/p99 at a steady rate (loopback)."
    )

    static let secret = "konto-bench-events-secret-0123456789abcdef"

    @Option(help: "Seconds measured per phase (after a 1 s warm-up).")
    var seconds: Int = 5

    @Option(help: "Publishing connections in the throughput phase.")
    var publishers: Int = 4

    @Option(help: "Events per publish in the throughput phase (the relay sends up to 100).")
    var batch: Int = 50

    @Option(help: "Consumers of the group, each on its own connection.")
    var consumers: Int = 2

    @Option(help: "Credit of each consumer's subscription.")
    var credit: Int = 64

    @Option(help: "Events per second in the latency phase.")
    var rate: Int = 1_000

    @Option(help: "pgbench clients (the baseline).")
    var pgbenchClients: Int = 8

    @Flag(help: "Wire TLS between the clients and Notifications (the test certificate), as compose runs it.")
    var tls = false

    func run() async throws {
        guard (1...60).contains(seconds), (1...64).contains(publishers), (1...1_000).contains(batch), (1...64).contains(consumers),
              (1...1_024).contains(credit), (10...100_000).contains(rate), (1...128).contains(pgbenchClients)
        else {
            throw ValidationError("bounded runs only")
        }
        let pgbench = try ProfileBenchmark.locatePgbench()
        let logger = {
            var logger = Logger(label: "konto.bench")
            logger.logLevel = .warning
            return logger
        }()
        let cluster = try await TemporaryPostgresCluster.start(logger: logger)
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
            try await Self.createBaselineTable(database, logger: logger)
            let baseline = try ProfileBenchmark.Pgbench(
                executable: pgbench,
                database: database,
                script: """
                    INSERT INTO bench_queue (payload) VALUES ('{"type":"detailsChanged","accountId":"a1","keys":["name"]}');
                    DELETE FROM bench_queue WHERE id = (SELECT id FROM bench_queue ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED);

                    """,
                connections: pgbenchClients,
                seconds: seconds,
                queryProtocol: "extended"
            )
            defer { baseline.removeScript() }
            try await baseline.warmUp()
            let before = try await baseline.sample()
            let settings = PostgresSettings(host: database.host, port: database.port, username: database.username, password: database.password, database: database.database)
            var options = NotificationOptions()
            options.pollInterval = .milliseconds(100)
            var configuration = NotificationServiceConfiguration(port: 0, secret: WireSecret(Self.secret), database: settings, options: options)
            let tls = try self.wireTLS()
            configuration.wireTLS = tls
            let server = try NotificationServer(configuration: configuration, logger: logger)
            let (throughput, latency, rss) = try await RunningServices.with([server], logger: logger) {
                let port = try await server.localAddress().port!
                let throughput = try await measureThroughput(port: port, tls: tls, logger: logger)
                let latency = try await measureLatency(port: port, tls: tls, logger: logger)
                return (throughput, latency, Self.residentMiB())
            }
            let after = try await baseline.sample()
            try? await TestDatabase.dropDatabase(database.database, on: cluster.maintenanceDatabase, logger: logger)
            report(throughput: throughput, baseline: [before.transactionsPerSecond, after.transactionsPerSecond], latency: latency, rss: rss)
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    static func createBaselineTable(_ database: PostgresTestDatabase, logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: database.connectionConfiguration, id: 1, logger: logger)
        try await connection.query("CREATE TABLE bench_queue (id bigserial PRIMARY KEY, payload jsonb NOT NULL)", logger: logger)
        try await connection.close()
    }

    /// When each event was published, and what its consumers saw.
    final class Tracker: Sendable {
        private struct State {
            var published: [UUID: ContinuousClock.Instant] = [:]
            var acked = 0
            var latencies: [Duration] = []
            var recording = false
        }

        private let state = Mutex(State())

        func published(_ events: [AccountEvent], at instant: ContinuousClock.Instant) {
            state.withLock { state in
                for event in events { state.published[event.id] = instant }
            }
        }

        func acked(_ id: UUID, at instant: ContinuousClock.Instant) {
            state.withLock { state in
                state.acked += 1
                if let start = state.published.removeValue(forKey: id), state.recording {
                    state.latencies.append(instant - start)
                }
            }
        }

        var acked: Int { state.withLock { $0.acked } }
        var outstanding: Int { state.withLock { $0.published.count } }
        func record(_ on: Bool) { state.withLock { $0.recording = on } }
        var latencies: [Duration] { state.withLock { $0.latencies } }
    }

    /// With `--tls`, the test certificate (written to a temporary directory once, at the start) served by
    /// Notifications and trusted by the clients.
    func wireTLS() throws -> WireTLS? {
        guard self.tls else { return nil }
        return try TLSTestCertificate.files(in: FileManager.default.temporaryDirectory.appendingPathComponent("konto-bench-tls-\(getpid())"))
    }

    /// Publishers and consumers call as Profile does (publish, declareGroup, subscribe: its allow-list).
    static func client(port: Int, tls: WireTLS?, logger: Logger) throws -> WireClient {
        var configuration = WireClient.Configuration(port: port, serviceName: ProfileContract.serviceName, serverName: NotificationsContract.serviceName, secret: WireSecret(Self.secret))
        try configuration.apply(tls)
        configuration.connectionCount = 1
        configuration.requestTimeout = .seconds(30)
        return WireClient(configuration: configuration, logger: logger)
    }

    /// Runs the group's consumers for the duration of `body`.
    private func withConsumers<T: Sendable>(port: Int, tls: WireTLS?, group: String, tracker: Tracker, logger: Logger, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let clients = try (0..<consumers).map { _ in try Self.client(port: port, tls: tls, logger: logger) }
        let credit = self.credit
        return try await RunningServices.with(clients, logger: logger) {
            _ = try await clients[0].call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: group))
            return try await withThrowingTaskGroup(of: T?.self) { tasks in
                for client in clients {
                    let subscription = try await client.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: group), credit: credit)
                    tasks.addTask {
                        for try await delivery in subscription {
                            subscription.acknowledge(delivery)
                            tracker.acked(delivery.event.id, at: .now)
                        }
                        return nil
                    }
                }
                let result = try await body()
                tasks.cancelAll()
                return result
            }
        }
    }

    struct Throughput {
        var eventsPerSecond: Double
    }

    /// Publishers as fast as they can, consumers acking at once: events acked per second in the window.
    private func measureThroughput(port: Int, tls: WireTLS?, logger: Logger) async throws -> Throughput {
        let tracker = Tracker()
        let publishers = try (0..<self.publishers).map { _ in try Self.client(port: port, tls: tls, logger: logger) }
        let (seconds, batch) = (self.seconds, self.batch)
        return try await withConsumers(port: port, tls: tls, group: "profile.bench-throughput", tracker: tracker, logger: logger) {
            try await RunningServices.with(publishers, logger: logger) {
                let stop = StopFlag()
                return try await withThrowingTaskGroup(of: Void.self) { tasks in
                    for (index, publisher) in publishers.enumerated() {
                        tasks.addTask {
                            var number = 0
                            while !stop.isSet {
                                // Bounded backlog: the publishers may run ahead of the consumers by a few batches only.
                                if tracker.outstanding > 20 * batch {
                                    try await Task.sleep(for: .milliseconds(1))
                                    continue
                                }
                                let events = (0..<batch).map { offset in
                                    AccountEvent(accountId: "account-\(index)-\((number + offset) % 97)", kind: .detailsChanged(keys: ["name"]))
                                }
                                number += batch
                                tracker.published(events, at: .now)
                                _ = try await publisher.call(NotificationsContract.publish, NotificationsPublishRequest(events: events))
                            }
                        }
                    }
                    try await Task.sleep(for: .seconds(1))
                    let start = (ContinuousClock.now, tracker.acked)
                    try await Task.sleep(for: .seconds(seconds))
                    let end = (ContinuousClock.now, tracker.acked)
                    stop.set()
                    try await tasks.waitForAll()
                    let elapsed = end.0 - start.0
                    return Throughput(eventsPerSecond: Double(end.1 - start.1) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18))
                }
            }
        }
    }

    /// One publisher at a steady rate (a publish every 10 ms), consumers acking at once: publish-to-ack latencies.
    private func measureLatency(port: Int, tls: WireTLS?, logger: Logger) async throws -> [Duration] {
        let tracker = Tracker()
        let publisher = try Self.client(port: port, tls: tls, logger: logger)
        let (seconds, rate) = (self.seconds, self.rate)
        return try await withConsumers(port: port, tls: tls, group: "profile.bench-latency", tracker: tracker, logger: logger) {
            try await RunningServices.with([publisher], logger: logger) {
                let tick = Duration.milliseconds(10)
                let perTick = max(1, rate / 100)
                var next = ContinuousClock.now
                let warmUpEnd = next + .seconds(1)
                let end = warmUpEnd + .seconds(seconds)
                var number = 0
                while next < end {
                    tracker.record(next >= warmUpEnd)
                    let events = (0..<perTick).map { offset in AccountEvent(accountId: "steady-\((number + offset) % 211)", kind: .detailsChanged(keys: ["name"])) }
                    number += perTick
                    tracker.published(events, at: .now)
                    _ = try await publisher.call(NotificationsContract.publish, NotificationsPublishRequest(events: events))
                    next += tick
                    try await Task.sleep(until: next)
                }
                // The last events' acks.
                let drained = ContinuousClock.now + .seconds(10)
                while tracker.outstanding > 0, ContinuousClock.now < drained {
                    try await Task.sleep(for: .milliseconds(5))
                }
                return tracker.latencies
            }
        }
    }

    static func residentMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kib / 1_024
    }

    private func report(throughput: Throughput, baseline: [Double], latency: [Duration], rss: Double) {
        let baselineTPS = baseline.reduce(0, +) / Double(baseline.count)
        let ratio = throughput.eventsPerSecond / baselineTPS
        let milliseconds = latency.map { Double($0.components.seconds) * 1_000 + Double($0.components.attoseconds) / 1e15 }.sorted()
        func percentile(_ p: Double) -> Double {
            milliseconds.isEmpty ? .nan : milliseconds[min(milliseconds.count - 1, Int(Double(milliseconds.count) * p))]
        }
        print("durable events end to end (publish → stored → delivered → acked), Notifications on PostgreSQL, loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        print(String(format: "  throughput: %.0f events/s (%d publishers × %d per publish, %d consumers, credit %d)", throughput.eventsPerSecond, publishers, batch, consumers, credit))
        print(String(format: "  pgbench insert + SKIP LOCKED claim-and-delete: %.0f / %.0f tps (before / after), %d clients", baseline[0], baseline[1], pgbenchClients))
        print(String(format: "  at a steady %d events/s: p50 %.1f ms, p99 %.1f ms over %d events", rate, percentile(0.5), percentile(0.99), milliseconds.count))
        print(String(format: "  RSS of the benchmark process (service, clients and consumers in it): %.0f MiB", rss))
        print(String(format: "konto-bench events: ratio=%.2f target=0.5 tls=\(tls ? "on" : "off") events_per_s=%.0f baseline_tps=%.0f p50_ms=%.1f p99_ms=%.1f p99_target_ms=50 steady_rate=%d rss_mib=%.0f",
                     ratio, throughput.eventsPerSecond, baselineTPS, percentile(0.5), percentile(0.99), rate, rss))
    }
}

private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}
