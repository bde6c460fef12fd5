import ArgumentParser
import Foundation
import KontoContracts
import KontoMail
import KontoModel
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NotificationService
import PostgresNIO

/// `konto-bench mail`: mails/s through Notifications' courier (mail requests stored in PostgreSQL, claimed, rendered,
/// sent over SMTP, acknowledged) to a local SMTP sink (aiosmtpd), beside the same sink's rate for the same message
/// sent by Python's smtplib over one connection; then enqueue-to-accepted latency at a steady rate.
struct MailBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mail",
        abstract: "Courier mails/s to an SMTP sink vs smtplib to the same sink; p50/p99 enqueue-to-accepted at a steady rate (loopback)."
    )

    static let secret = WireSecret("konto-bench-mail-secret-0123456789abcdef")

    @Option(help: "Mails sent in the throughput phase (each side).")
    var mails: Int = 2_000

    @Option(help: "Mails in flight at once (SMTP connections of the courier).")
    var concurrency: Int = 4

    @Option(help: "Mails per second in the latency phase.")
    var rate: Int = 50

    @Option(help: "Seconds of the latency phase.")
    var seconds: Int = 10

    @Option(help: "The Python with aiosmtpd (default: $KONTO_AIOSMTPD_PYTHON, which scripts/test.sh sets up).")
    var python: String?

    func run() async throws {
        guard (10...100_000).contains(mails), (1...64).contains(concurrency), (1...1_000).contains(rate), (1...120).contains(seconds) else {
            throw ValidationError("bounded runs only")
        }
        guard let python = python ?? ProcessInfo.processInfo.environment["KONTO_AIOSMTPD_PYTHON"] else {
            throw ValidationError("--python or KONTO_AIOSMTPD_PYTHON: a Python with aiosmtpd (scripts/test.sh makes one)")
        }
        var logger = Logger(label: "konto.bench")
        logger.logLevel = .warning
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Mail/smtp_sink.py").path

        // Baseline: smtplib sends the courier's own rendering of a reset mail, one connection, as fast as the sink takes it.
        let sample = try MailComposer(settings: settings(port: 1), seal: ResetTokenSeal(secret: Self.secret))
            .message(for: Self.request(accountId: "bench-0"), Self.mailRequest(accountId: "bench-0"))
        let messageFile = FileManager.default.temporaryDirectory.appendingPathComponent("konto-bench-mail-\(UUID().uuidString).eml").path
        try Data(sample.rendered()).write(to: URL(fileURLWithPath: messageFile))
        defer { try? FileManager.default.removeItem(atPath: messageFile) }
        let baselineSink = try await Sink.start(python: python, script: script)
        let sent = try await ServiceProcess.run(python, arguments: ["-u", script, "send", "\(baselineSink.port)", "\(mails)", messageFile])
        await baselineSink.stop()
        guard sent.status == 0, let baselineSeconds = Double(sent.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ValidationError("smtplib failed: \(sent.standardError)")
        }
        let baselineRate = Double(mails) / baselineSeconds

        let cluster = try await TemporaryPostgresCluster.start(logger: logger)
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
            let client = PostgresClient(configuration: database.clientConfiguration, eventLoopGroup: MultiThreadedEventLoopGroup.singleton, backgroundLogger: logger)
            let (courierRate, latencies) = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                let storage = PostgresNotificationStorage(client: client, logger: logger)
                try await storage.migrate()
                return try await measureCourier(storage: storage, python: python, script: script, logger: logger)
            }
            try await cluster.destroy()
            func percentile(_ p: Double) -> Double {
                let sorted = latencies.sorted()
                return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
            }
            let ratio = courierRate / baselineRate
            print(String(format: "  courier (PostgreSQL, %d connections): %.0f mails/s over %d mails", concurrency, courierRate, mails))
            print(String(format: "  smtplib, one connection, the same message: %.0f mails/s", baselineRate))
            print(String(format: "  at a steady %d mails/s: p50 %.1f ms, p99 %.1f ms enqueue to accepted, over %d mails", rate, percentile(0.5), percentile(0.99), latencies.count))
            print(String(format: "konto-bench mail: ratio=%.2f target=0.5 courier_mails_per_s=%.0f smtplib_mails_per_s=%.0f p50_ms=%.1f p99_ms=%.1f steady_rate=%d concurrency=%d",
                         ratio, courierRate, baselineRate, percentile(0.5), percentile(0.99), rate, concurrency))
        } catch {
            try? await cluster.destroy()
            throw error
        }
    }

    /// Throughput (requests stored first, then the courier started and timed until the sink has them all), then
    /// latency (a request published every 1/rate s, each timed from its publish to the sink's acceptance).
    private func measureCourier(storage: PostgresNotificationStorage, python: String, script: String, logger: Logger) async throws -> (Double, [Double]) {
        var options = NotificationOptions()
        options.pollInterval = .milliseconds(100)
        let store = NotificationStore(storage: storage, options: options, logger: logger)
        _ = try await store.declareGroup(NotificationsSubscribeRequest(group: MailCourier.group, types: ["mailRequested"]))
        let sink = try await Sink.start(python: python, script: script)
        var settings = try settings(port: sink.port)
        settings.concurrency = concurrency
        let courier = try MailCourier(store: store, settings: settings, seal: ResetTokenSeal(secret: Self.secret), logger: logger)
        do {
            for start in stride(from: 0, to: mails, by: 500) {
                let events = (start..<min(start + 500, mails)).map { Self.request(accountId: "bench-\($0)") }
                _ = try await store.publish(NotificationsPublishRequest(events: events))
            }
            let result = try await withThrowingTaskGroup(of: Void.self) { group in
                let started = ContinuousClock.now
                group.addTask { try await courier.run() }
                defer { group.cancelAll() }
                try await sink.wait(forCount: mails, within: .seconds(600))
                let elapsed = ContinuousClock.now - started
                let throughput = Double(mails) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                // Steady rate: each request's publish time by its id, the sink's acceptance by the mail's Message-ID.
                var published: [String: Int64] = [:]
                let total = rate * seconds
                let interval = Duration.nanoseconds(1_000_000_000 / rate)
                let begin = ContinuousClock.now
                for index in 0..<total {
                    try await Task.sleep(until: begin + interval * index, clock: .continuous)
                    let event = Self.request(accountId: "steady-\(index)")
                    published["<\(event.id.uuidString.lowercased())@bench.test>"] = Int64(Date().timeIntervalSince1970 * 1e9)
                    _ = try await store.publish(NotificationsPublishRequest(events: [event]))
                }
                try await sink.wait(forCount: mails + total, within: .seconds(120))
                let latencies = sink.received().compactMap { arrival -> Double? in
                    published[arrival.messageId].map { Double(arrival.nanoseconds - $0) / 1e6 }
                }
                return (throughput, latencies)
            }
            await sink.stop()
            return result
        } catch {
            await sink.stop()
            throw error
        }
    }

    func settings(port: Int) throws -> MailSettings {
        MailSettings(
            smtp: SMTPClient.Configuration(host: "127.0.0.1", port: port, security: .none),
            from: try MailAddress("accounts@bench.test"), fromName: "Konto Bench", publicURL: "https://accounts.bench.test"
        )
    }

    static func mailRequest(accountId: String) -> MailRequest {
        MailRequest(
            message: .passwordReset, to: "ada@bench.test", sealedToken: ResetTokenSeal(secret: secret).seal("a-reset-token-of-43-characters-for-the-ben", accountId: accountId),
            expiresAt: Date().addingTimeInterval(3_600)
        )
    }

    static func request(accountId: String) -> AccountEvent {
        AccountEvent(accountId: accountId, kind: .mailRequested(mailRequest(accountId: accountId)))
    }

    /// The aiosmtpd sink as a process of its own; its log holds one line per mail accepted.
    struct Sink {
        let process: ServiceProcess
        let port: Int

        struct Arrival {
            var nanoseconds: Int64
            var messageId: String
        }

        static func start(python: String, script: String) async throws -> Sink {
            let port = try FreePort.loopback()
            let process = try ServiceProcess.start(python, arguments: ["-u", script, "sink", "\(port)"], environment: [:])
            let deadline = ContinuousClock.now + .seconds(30)
            while !process.output.hasPrefix("ready") {
                guard process.isRunning, ContinuousClock.now < deadline else { throw ValidationError("the SMTP sink did not start: \(process.output)") }
                try await Task.sleep(for: .milliseconds(20))
            }
            return Sink(process: process, port: port)
        }

        func received() -> [Arrival] {
            process.output.split(separator: "\n").dropFirst().compactMap { line in
                let parts = line.split(separator: " ", maxSplits: 1)
                guard parts.count == 2, let time = Int64(parts[0]) else { return nil }
                return Arrival(nanoseconds: time, messageId: String(parts[1]))
            }
        }

        /// Polls the sink's log (another process) until `count` mails arrived. Reads only what is new and counts its
        /// line ends: parsing the whole log every 10 ms took a fair share of two cores from the courier it measures.
        func wait(forCount count: Int, within bound: Duration) async throws {
            let deadline = ContinuousClock.now + bound
            guard let log = FileHandle(forReadingAtPath: process.logPath) else { throw ValidationError("the sink's log cannot be read") }
            defer { try? log.close() }
            // The first line is `ready`.
            var lines = -1
            while lines < count {
                let new = log.readDataToEndOfFile()
                lines += new.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                guard lines < count else { break }
                guard ContinuousClock.now < deadline else { throw ValidationError("the sink has \(received().count) of \(count) mails after \(bound)") }
                try await Task.sleep(for: .milliseconds(10))
            }
        }

        func stop() async {
            await process.stop(grace: .seconds(5))
        }
    }
}
