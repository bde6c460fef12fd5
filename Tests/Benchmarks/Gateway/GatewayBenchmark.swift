import ArgumentParser
import Foundation
import IdentityService
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import Logging
import NIOCore
import NotificationService
import ProfileService

/// `konto-bench gateway`: `GET /v1/account` with valid tokens through the gateway in front of Identity, Profile and
/// Notifications on PostgreSQL (the four executables as processes, as compose runs them), driven by wrk at 64
/// connections, next to pgbench's primary-key SELECT (`pgbench -S`) at the same concurrency on the same database.
/// Each process's CPU per request (from /proc; PostgreSQL's postmaster and backends together, wrk as a reaped child)
/// says where a request's time goes.
struct GatewayBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "GET /v1/account req/s through the gateway (wrk) vs pgbench -S; p99; CPU per request by process; the gateway's peak RSS (loopback)."
    )


    @Option(help: "Seconds measured (after a 1 s warm-up).") var seconds: Int = 5
    @Option(help: "Connections of wrk and clients of pgbench.") var connections: Int = 64
    @Option(help: "Accounts signed up, whose tokens the requests rotate through.") var accounts: Int = 200
    @Option(help: "Wire connections from the gateway to each service.") var upstreamConnections: Int = 4
    @Option(help: "The gateway's account cache time to live in milliseconds (0: off, every request asks Identity and Profile).") var cacheMs: Int = 30_000

    func run() async throws {
        guard (1...60).contains(seconds), (1...1_024).contains(connections), (1...10_000).contains(accounts), (1...64).contains(upstreamConnections), (0...55_000).contains(cacheMs) else {
            throw ValidationError("bounded runs only")
        }
        guard let wrk = ChildProcess.which("wrk") else { throw ValidationError("needs wrk (Debian's wrk package)") }
        let pgbench = try ProfileBenchmark.locatePgbench()
        let logger = {
            var logger = Logger(label: "konto.bench")
            logger.logLevel = .warning
            return logger
        }()
        let cluster = try await TemporaryPostgresCluster.start(logger: logger)
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: logger)
            // The four executables as separate processes (compose's topology), so each one's CPU is its own.
            let stack = try KontoProcessStack(databaseURL: database.url, environment: [
                "KONTO_GATEWAY_RATE_LIMIT_PER_MINUTE": "0",
                "KONTO_GATEWAY_CREDENTIALS_RATE_LIMIT_PER_MINUTE": "0",
                "KONTO_GATEWAY_CONNECTIONS_PER_SERVICE": "\(upstreamConnections)",
                "KONTO_GATEWAY_CACHE_MS": "\(cacheMs)",
                "KONTO_LOG_LEVEL": "error",
            ])
            let load: Load, rss: Double, cpu: [String: Double]
            do {
                let identityPort = try Self.required(Int(stack.environment["KONTO_IDENTITY_PORT"] ?? ""))
                let tokens = try await signUp(identityPort: identityPort, secret: stack.wireSecret, logger: logger)
                let gatewayPID = try Self.required(stack.process("konto-gateway")?.pid)
                var groups: [(String, [pid_t])] = [("gateway", [gatewayPID])]
                for (name, service) in [("identity", "konto-identity"), ("profile", "konto-profile"), ("notifications", "konto-notifications")] {
                    groups.append((name, [try Self.required(stack.process(service)?.pid)]))
                }
                let postmaster = try Self.required(cluster.postmasterPID)
                (load, cpu) = try runWrk(wrk, port: stack.gatewayPort, tokens: tokens) {
                    ProcessCPU.Snapshot(groups + [("postgres", ProcessCPU.family(of: postmaster))])
                }
                rss = Self.peakResidentMiB(of: gatewayPID)
            } catch {
                await stack.stopAll()
                throw error
            }
            await stack.stopAll()
            // The baseline on the same database, after ours (the services are stopped by then).
            _ = try await ProfileBenchmark.output(pgbench, ["-i", "-q", "-s", "1", "-h", database.host, "-p", "\(database.port)", "-U", database.username, database.database],
                                                  environment: ["PGPASSWORD": database.password ?? ""], limit: .seconds(120))
            let baseline = try ProfileBenchmark.Pgbench(
                executable: pgbench,
                database: database,
                script: "\\set aid random(1, 100000)\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
                connections: connections,
                seconds: seconds,
                queryProtocol: "simple"
            )
            defer { baseline.removeScript() }
            try await baseline.warmUp()
            let sample = try await baseline.sample()
            try? await TestDatabase.dropDatabase(database.database, on: cluster.maintenanceDatabase, logger: logger)
            report(load: load, rss: rss, cpu: cpu, baseline: sample.transactionsPerSecond)
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    /// Signs `accounts` users up through Identity; their session tokens.
    static func required<T>(_ value: T?, _ what: String = "a process of the stack") throws -> T {
        guard let value else { throw ValidationError("\(what) is missing") }
        return value
    }

    /// Identity is called as the gateway, with the key derived from the stack's root (which this process holds); the
    /// first call waits for Identity to listen.
    private func signUp(identityPort: Int, secret: String, logger: Logger) async throws -> [String] {
        var configuration = WireClient.Configuration(port: identityPort, serviceName: WireAllowList.gateway, serverName: IdentityContract.serviceName, secret: WireSecret(secret))
        configuration.requestTimeout = .seconds(30)
        let client = WireClient(configuration: configuration, logger: logger)
        let count = accounts
        return try await RunningServices.with([client], logger: logger) {
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(60)
            while (try? await client.call(HealthContract.check, .init())) == nil {
                guard clock.now < deadline else { throw ValidationError("Identity did not answer within 60 s") }
                try await Task.sleep(for: .milliseconds(100))
            }
            return try await withThrowingTaskGroup(of: [String].self) { tasks in
                for worker in 0..<8 {
                    tasks.addTask {
                        var tokens: [String] = []
                        for index in stride(from: worker, to: count, by: 8) {
                            var details = AccountDetails()
                            details[\.name] = PersonName(givenName: "User \(index)", familyName: "Bench")
                            details[\.email] = "user\(index)@example.com"
                            let session = try await client.call(IdentityContract.signUp, IdentitySignUpRequest(
                                userId: "user\(index)@example.com", password: SecretString("benchmark password \(index)"), details: details
                            ))
                            tokens.append(session.session.token.value)
                        }
                        return tokens
                    }
                }
                return try await tasks.reduce(into: []) { $0 += $1 }
            }
        }
    }

    struct Load {
        var requestsPerSecond: Double
        var p50: Double
        var p99: Double
        var failures: Int
        var requests: Int
    }

    /// wrk with a script that rotates through the tokens; wrk counts the answers that are not 2xx. `snapshot` is read
    /// just before and after the measured run: each process group's CPU per request.
    private func runWrk(_ wrk: String, port: Int, tokens: [String], snapshot: () -> ProcessCPU.Snapshot) throws -> (Load, [String: Double]) {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("konto-bench-gateway-\(UUID().uuidString).lua")
        defer { try? FileManager.default.removeItem(at: script) }
        try """
            local tokens = {\(tokens.map { "\"\($0)\"" }.joined(separator: ","))}
            local i = 0
            request = function()
              i = i % #tokens + 1
              return wrk.format("GET", "/v1/account", { ["Authorization"] = "Bearer " .. tokens[i] })
            end
            """.write(to: script, atomically: true, encoding: .utf8)
        let url = "http://127.0.0.1:\(port)"
        let threads = "\(max(1, min(2, ProcessInfo.processInfo.activeProcessorCount)))"
        _ = try ChildProcess.output(wrk, ["-t", threads, "-c", "\(connections)", "-d", "1s", "-s", script.path, url])
        let before = snapshot()
        let output = try ChildProcess.output(wrk, ["-t", threads, "-c", "\(connections)", "-d", "\(seconds)s", "--latency", "-s", script.path, url])
        let after = snapshot()
        let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let rpsLine = lines.first(where: { $0.hasPrefix("Requests/sec:") }),
              let rps = Double(rpsLine.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces)),
              let requestsLine = lines.first(where: { $0.contains("requests in") }),
              let requests = Int(requestsLine.split(separator: " ").first ?? "")
        else {
            throw ValidationError("could not read wrk's output:\n\(output)")
        }
        let failures = lines.first(where: { $0.hasPrefix("Non-2xx or 3xx responses:") })
            .flatMap { Int($0.dropFirst("Non-2xx or 3xx responses:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        let load = Load(requestsPerSecond: rps, p50: Self.milliseconds(after: "50%", in: output), p99: Self.milliseconds(after: "99%", in: output), failures: failures, requests: requests)
        return (load, after.microsecondsPerRequest(since: before, requests: requests))
    }

    /// wrk's latency distribution line (`99%    3.21ms`) in milliseconds.
    static func milliseconds(after label: String, in output: String) -> Double {
        guard let line = output.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }) else { return .nan }
        let value = line.trimmingCharacters(in: .whitespaces).dropFirst(label.count).trimmingCharacters(in: .whitespaces)
        let number = Double(value.prefix { $0.isNumber || $0 == "." }) ?? .nan
        if value.hasSuffix("us") { return number / 1_000 }
        if value.hasSuffix("ms") { return number }
        if value.hasSuffix("s") { return number * 1_000 }
        return number
    }

    /// The peak resident memory (VmHWM) of a process, in MiB.
    static func peakResidentMiB(of pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kib = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return .nan }
        return kib / 1_024
    }

    private func report(load: Load, rss: Double, cpu: [String: Double], baseline: Double) {
        let ratio = load.requestsPerSecond / baseline
        let path = cacheMs > 0 ? "its account cache (kept by account events), misses to Identity + Profile" : "Identity (validate) + Profile (load), no cache"
        let order = ["gateway", "identity", "profile", "notifications", "postgres", "wrk"]
        let total = order.compactMap { cpu[$0] }.reduce(0, +)
        print("GET /v1/account through konto-gateway → \(path) on PostgreSQL; the four executables as processes, loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores")
        print(String(format: "  wrk, %d connections, %d tokens: %.0f req/s, p50 %.2f ms, p99 %.2f ms, answers not 2xx: %d", connections, accounts, load.requestsPerSecond, load.p50, load.p99, load.failures))
        print(String(format: "  pgbench -S (primary-key SELECT), %d clients, same database: %.0f tps", connections, baseline))
        print("  CPU per request (µs, from /proc): " + order.map { "\($0) " + String(format: "%.0f", cpu[$0] ?? .nan) }.joined(separator: ", ") + String(format: "; total %.0f", total))
        print(String(format: "  gateway peak RSS: %.1f MiB", rss))
        let figures = order.map { "cpu_us_\($0)=" + String(format: "%.0f", cpu[$0] ?? .nan) }.joined(separator: " ")
        print(String(format: "konto-bench gateway: ratio=%.2f target=0.5 requests_per_s=%.0f baseline_tps=%.0f p50_ms=%.2f p99_ms=%.2f p99_target_ms=20 gateway_rss_mib=%.1f rss_target_mib=64 non_2xx=%d connections=%d cache_ms=%d cpu_us_total=%.0f ",
                     ratio, load.requestsPerSecond, baseline, load.p50, load.p99, rss, load.failures, connections, cacheMs, total) + figures)
    }
}
