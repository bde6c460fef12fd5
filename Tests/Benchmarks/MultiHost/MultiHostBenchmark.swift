import ArgumentParser
import Foundation
import KontoTestSupport
import Logging
import PostgresNIO

/// `konto-bench multihost`: the multi-host rehearsal's topology (hosts as network namespaces on a bridge, PostgreSQL on
/// one, every service on each of two more, HAProxy in front of the gateways), measured through HAProxy with one host
/// in the rotation and then with both: cached `GET /v1/account` and logins per second (wrk), PostgreSQL connections
/// per host, and how long HAProxy takes to take a host out that died whole. On one machine both hosts share its
/// cores, so this measures what a second host costs per core, not what it adds: the ratio is two hosts' cached reads
/// per second over one host's, on the same cores (target 0.9: spreading over two hosts costs at most a tenth).
/// Needs root (network namespaces), haproxy, wrk and curl; the release build's services beside this executable.
struct MultiHostBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multihost",
        abstract: "Cached reads and logins per second through HAProxy with one host and two (network namespaces), PostgreSQL connections per host, HAProxy's time to drop a dead host."
    )

    @Option(help: "Seconds measured per phase (after a 1 s warm-up).") var seconds: Int = 5
    @Option(help: "Connections of wrk.") var connections: Int = 32
    @Option(help: "Accounts signed up, whose tokens the reads rotate through.") var accounts: Int = 40

    func run() async throws {
        guard (1...60).contains(seconds), (1...512).contains(connections), (2...1_000).contains(accounts) else { throw ValidationError("bounded runs only") }
        guard let wrk = ChildProcess.which("wrk"), let curl = ChildProcess.which("curl") else { throw ValidationError("needs wrk and curl (Debian's packages)") }
        let logger = {
            var logger = Logger(label: "konto.bench")
            logger.logLevel = .warning
            return logger
        }()
        let network = try await VirtualNetwork.create(hosts: ["db", "a", "b"])
        var cluster: TemporaryPostgresCluster?
        var stacks: [KontoProcessStack] = []
        var proxy: HAProxy?
        func tearDown() async {
            for stack in stacks { await stack.stopAll() }
            await proxy?.stop()
            try? await cluster?.destroy()
            await network.destroy()
        }
        do {
            cluster = try await TemporaryPostgresCluster.start(on: try network.host("db"), logger: logger)
            let database = try await TestDatabase.createDatabase(on: cluster!.maintenanceDatabase, logger: logger)
            // deploy/accounts.yaml, the deployment's key schema (run from the repository's root).
            guard FileManager.default.fileExists(atPath: "deploy/accounts.yaml") else { throw ValidationError("run from the repository's root (needs deploy/accounts.yaml)") }
            let settings = [
                "KONTO_ACCOUNTS_CONFIG": FileManager.default.currentDirectoryPath + "/deploy/accounts.yaml",
                "KONTO_WIRE_SECRET": "multi-host-bench-" + UUID().uuidString,
                "KONTO_GATEWAY_RATE_LIMIT_PER_MINUTE": "0",
                "KONTO_GATEWAY_CREDENTIALS_RATE_LIMIT_PER_MINUTE": "0",
                "KONTO_LOG_LEVEL": "error",
            ]
            for name in ["a", "b"] {
                stacks.append(try KontoProcessStack(databaseURL: database.url, environment: settings, on: try network.host(name), of: network))
            }
            proxy = try await HAProxy.start(servers: try zip(["a", "b"], stacks).map { name, stack in
                HAProxy.Server(name: name, address: try network.host(name).address, port: stack.gatewayPort)
            })
            let url = proxy!.url
            try await Self.waitUntil(within: .seconds(90), "both gateways are up in HAProxy") {
                let states = try await proxy!.serverStates()
                return states["a"]?.status == "UP" && states["b"]?.status == "UP"
            }
            let tokens = try (0..<accounts).map { index in try Self.signUp(curl, url: url, index: index) }

            var figures: [String: Double] = [:]
            for hosts in [1, 2] {
                try proxy!.setServer("b", enabled: hosts == 2)
                try await Self.waitUntil(within: .seconds(10), "HAProxy has \(hosts) host(s) in the rotation") {
                    let states = try await proxy!.serverStates()
                    return (states["b"]?.status == "UP") == (hosts == 2)
                }
                let reads = try runWrk(wrk, url: url, script: Self.readScript(tokens))
                let logins = try runWrk(wrk, url: url, script: Self.loginScript(accounts: accounts))
                figures["reads_per_s_\(hosts)"] = reads.perSecond
                figures["reads_non_2xx_\(hosts)"] = Double(reads.failures)
                figures["logins_per_s_\(hosts)"] = logins.perSecond
                figures["logins_non_2xx_\(hosts)"] = Double(logins.failures)
                print(String(format: "  %d host(s): cached GET /v1/account %.0f req/s (%d not 2xx); logins %.1f /s (%d not 2xx)", hosts, reads.perSecond, reads.failures, logins.perSecond, logins.failures))
            }
            // PostgreSQL connections by client host (each host's three services' pools), while both are running.
            let byHost = try await TestDatabase.withClient(database, logger: logger) { client in
                var counts: [String: Int] = [:]
                let rows = try await client.query("SELECT host(client_addr), count(*)::int FROM pg_stat_activity WHERE client_addr IS NOT NULL GROUP BY 1", logger: logger)
                for try await (address, count) in rows.decode((String, Int).self) { counts[address] = count }
                return counts
            }
            let connectionsA = byHost[try network.host("a").address] ?? 0, connectionsB = byHost[try network.host("b").address] ?? 0
            // Host b lost whole: every process SIGKILLed, its link down; until HAProxy counts it down.
            let lostAt = ContinuousClock.now
            try await network.killEveryProcess(on: try network.host("b"))
            try await network.setLink(of: try network.host("b"), up: false)
            try await Self.waitUntil(within: .seconds(30), "HAProxy takes host b out") {
                try await proxy!.serverStates()["b"]?.status.hasPrefix("DOWN") == true
            }
            let takenOut = ContinuousClock.now - lostAt
            await stacks[1].reapAll()
            await tearDown()

            let cores = ProcessInfo.processInfo.activeProcessorCount
            let ratio = figures["reads_per_s_2", default: 0] / max(figures["reads_per_s_1", default: 1], 1)
            print("Konto on two hosts (network namespaces on one machine, \(cores) cores shared), HAProxy in front; wrk \(connections) connections, \(accounts) accounts")
            print(String(format: "  per core: reads %.0f/s with one host, %.0f/s with two; logins %.1f/s and %.1f/s", figures["reads_per_s_1", default: 0] / Double(cores),
                         figures["reads_per_s_2", default: 0] / Double(cores), figures["logins_per_s_1", default: 0] / Double(cores), figures["logins_per_s_2", default: 0] / Double(cores)))
            print("  PostgreSQL connections: host a \(connectionsA), host b \(connectionsB); HAProxy took a dead host out after \(takenOut.components.seconds * 1_000 + takenOut.components.attoseconds / 1_000_000_000_000_000) ms")
            print(String(format: "konto-bench multihost: ratio=%.2f target=0.9 reads_per_s_1=%.0f reads_per_s_2=%.0f logins_per_s_1=%.1f logins_per_s_2=%.1f non_2xx=%.0f pg_connections_a=%d pg_connections_b=%d takeout_ms=%d cores=%d",
                         ratio, figures["reads_per_s_1", default: 0], figures["reads_per_s_2", default: 0], figures["logins_per_s_1", default: 0], figures["logins_per_s_2", default: 0],
                         figures["reads_non_2xx_1", default: 0] + figures["reads_non_2xx_2", default: 0] + figures["logins_non_2xx_1", default: 0] + figures["logins_non_2xx_2", default: 0],
                         connectionsA, connectionsB, Int(takenOut.components.seconds * 1_000 + takenOut.components.attoseconds / 1_000_000_000_000_000), cores))
        } catch {
            await tearDown()
            throw error
        }
    }

    /// Signs account `index` up through HAProxy with curl; its session token.
    static func signUp(_ curl: String, url: String, index: Int) throws -> String {
        let body = #"{"userId":"user\#(index)@example.com","password":"benchmark password \#(index)","details":{"name":{"givenName":"User","familyName":"\#(index)"},"handle":"user\#(index)"}}"#
        let output = try ChildProcess.output(curl, ["-s", "-X", "POST", "-H", "Content-Type: application/json", "--data", body, url + "/v1/accounts"])
        guard let object = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
              let token = (object["session"] as? [String: Any])?["token"] as? String
        else {
            throw ValidationError("sign-up \(index) answered: \(output.prefix(300))")
        }
        return token
    }

    static func readScript(_ tokens: [String]) -> String {
        """
        local tokens = {\(tokens.map { "\"\($0)\"" }.joined(separator: ","))}
        local i = 0
        request = function()
          i = i % #tokens + 1
          return wrk.format("GET", "/v1/account", { ["Authorization"] = "Bearer " .. tokens[i] })
        end
        """
    }

    static func loginScript(accounts: Int) -> String {
        """
        local i = 0
        request = function()
          i = i % \(accounts)
          local body = '{"userId":"user' .. i .. '@example.com","password":"benchmark password ' .. i .. '"}'
          i = i + 1
          return wrk.format("POST", "/v1/sessions", { ["Content-Type"] = "application/json" }, body)
        end
        """
    }

    struct Load {
        var perSecond: Double
        var failures: Int
    }

    private func runWrk(_ wrk: String, url: String, script: String) throws -> Load {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("konto-bench-multihost-\(UUID().uuidString).lua")
        defer { try? FileManager.default.removeItem(at: path) }
        try script.write(to: path, atomically: true, encoding: .utf8)
        let threads = "\(max(1, min(2, ProcessInfo.processInfo.activeProcessorCount)))"
        _ = try ChildProcess.output(wrk, ["-t", threads, "-c", "\(connections)", "-d", "1s", "-s", path.path, url])
        let output = try ChildProcess.output(wrk, ["-t", threads, "-c", "\(connections)", "-d", "\(seconds)s", "-s", path.path, url])
        let lines = output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let line = lines.first(where: { $0.hasPrefix("Requests/sec:") }),
              let perSecond = Double(line.dropFirst("Requests/sec:".count).trimmingCharacters(in: .whitespaces))
        else {
            throw ValidationError("could not read wrk's output:\n\(output)")
        }
        let failures = lines.first(where: { $0.hasPrefix("Non-2xx or 3xx responses:") })
            .flatMap { Int($0.dropFirst("Non-2xx or 3xx responses:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        return Load(perSecond: perSecond, failures: failures)
    }

    static func waitUntil(within bound: Duration, _ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + bound
        while !((try? await condition()) ?? false) {
            guard ContinuousClock.now < deadline else { throw ValidationError("not within \(bound): \(what)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
