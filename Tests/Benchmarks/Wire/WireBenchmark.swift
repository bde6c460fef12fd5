import ArgumentParser
import Foundation
import KontoTestSupport
import KontoWire
import NIOCore
import NIOPosix
import NIOSSL

/// `konto-bench wire`: round trips per second and latency of the wire protocol against a server
/// in its own process, next to `redis-benchmark -t ping` at the same connection counts.
struct WireBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wire",
        abstract: "Wire protocol round trips vs redis-benchmark PING (loopback, -P 1 both sides)."
    )

    static let method = "bench.echo"
    static let secret = "konto-bench-secret-0123456789abcdef"

    @Option(parsing: .upToNextOption, help: "Connection counts to measure.")
    var connections: [Int] = [1, 16, 64]

    @Option(help: "Runs per connection count; medians are reported.")
    var runs: Int = 3

    @Option(help: "Seconds measured per run (after a warm-up of a quarter of it).")
    var seconds: Double = 3

    @Option(help: "Load generator event loop threads (redis-benchmark uses one by default).")
    var loadThreads: Int = 1

    /// One by default, like redis-server's single I/O thread: with the one-thread load generator
    /// that is two busy threads on two cores for both systems, instead of oversubscribing ours.
    @Option(help: "Server event loop threads (redis-server uses one).")
    var serverThreads: Int = 1

    /// The echo handler never blocks, which is exactly the case `.eventLoop` is for; pass
    /// `--server-handlers global` to measure the default execution mode.
    @Option(help: "Where the server runs handlers: event-loop (echo never blocks) or global (the WireServer default).")
    var serverHandlers: String = "event-loop"

    @Flag(help: "Skip the Redis baseline.")
    var noRedis = false

    /// The baseline stays redis-benchmark in plain TCP: the figure then says what TLS costs on top.
    @Flag(help: "Wire TLS between the load generator and the server (the test certificate).")
    var tls = false

    struct Row {
        var connections: Int
        var rps: Double
        var p50: Double
        var p99: Double
    }

    func run() async throws {
        precondition(self.runs > 0 && self.seconds > 0 && self.seconds <= 60, "bounded runs only")
        var serverArguments = ["wire-server", "--port", "0", "--threads", "\(self.serverThreads)", "--handlers", self.serverHandlers]
        var tlsContext: NIOSSLContext?
        if self.tls {
            let files = try TLSTestCertificate.files(in: FileManager.default.temporaryDirectory.appendingPathComponent("konto-bench-wire-tls-\(getpid())"))
            serverArguments += ["--tls-cert", files.certificatePath ?? "", "--tls-key", files.privateKeyPath ?? ""]
            tlsContext = try files.clientContext()
        }
        let server = try ChildProcess.start(CommandLine.arguments[0], serverArguments, readyPrefix: "READY ")
        defer { server.stop() }
        guard let port = Int(server.readyLine.dropFirst("READY ".count)) else {
            throw ValidationError("wire-server did not report its port")
        }

        var redis: RedisBaseline.Running?
        if !self.noRedis {
            redis = try RedisBaseline.start()
        }
        defer { redis?.server.stop() }

        // Ours and Redis alternate run by run, so background load on the machine hits both alike.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: self.loadThreads)
        var ours: [Row] = []
        var theirs: [Row] = []
        do {
            for count in self.connections {
                var oursSamples: [Row] = []
                var theirSamples: [Row] = []
                for _ in 0..<self.runs {
                    oursSamples.append(try await self.sampleOurs(port: port, tls: tlsContext, connections: count, group: group))
                    if let redis {
                        theirSamples.append(try RedisBaseline.sample(redis, connections: count, seconds: self.seconds))
                    }
                }
                ours.append(Statistics.median(oursSamples, connections: count))
                if !theirSamples.isEmpty {
                    theirs.append(Statistics.median(theirSamples, connections: count))
                }
            }
            try await group.shutdownGracefully()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        server.stop()
        redis?.server.stop()
        self.report(ours: ours, redis: theirs)
    }

    private func sampleOurs(port: Int, tls: NIOSSLContext?, connections count: Int, group: any EventLoopGroup) async throws -> Row {
        let result = try await WireLoadGenerator.run(
            .init(port: port, secret: Self.secret, tls: tls),
            connections: count,
            warmup: .nanoseconds(Int64(self.seconds * 0.25e9)),
            duration: .nanoseconds(Int64(self.seconds * 1e9)),
            group: group
        ) { _ in EchoWorkload() }
        progress("konto -c \(count): \(Int(result.requestsPerSecond)) rps")
        return Row(
            connections: count,
            rps: result.requestsPerSecond,
            p50: result.latencies.percentileMilliseconds(0.50),
            p99: result.latencies.percentileMilliseconds(0.99)
        )
    }

    private func report(ours: [Row], redis: [Row]) {

        print("")
        print("connections | konto rps | konto p50 ms | konto p99 ms | redis rps | redis p50 ms | redis p99 ms | ratio")
        print("----------- | --------- | ------------ | ------------ | --------- | ------------ | ------------ | -----")
        for row in ours {
            let baseline = redis.first { $0.connections == row.connections }
            let ratio = baseline.map { row.rps / $0.rps }
            print([
                "\(row.connections)",
                Statistics.format(row.rps, 0),
                Statistics.format(row.p50, 3),
                Statistics.format(row.p99, 3),
                baseline.map { Statistics.format($0.rps, 0) } ?? "-",
                baseline.map { Statistics.format($0.p50, 3) } ?? "-",
                baseline.map { Statistics.format($0.p99, 3) } ?? "-",
                ratio.map { Statistics.format($0, 2) } ?? "-",
            ].joined(separator: " | "))
        }
        print("(medians of \(self.runs) runs of \(self.seconds) s; server handlers: \(self.serverHandlers); server threads: \(self.serverThreads); load threads: \(self.loadThreads); redis: PING_MBULK from redis-benchmark)")

        let at16 = ours.first { $0.connections == 16 }
        let at64 = ours.first { $0.connections == 64 }
        let redis64 = redis.first { $0.connections == 64 }
        let ratio = (at64?.rps).flatMap { ours in redis64.map { ours / $0.rps } }
        print(
            "konto-bench wire: ratio=\(ratio.map { Statistics.format($0, 2) } ?? "n/a") target=1.0 tls=\(self.tls ? "on" : "off")"
                + " p50_16=\(at16.map { Statistics.format($0.p50, 3) + "ms" } ?? "n/a")"
                + " p99_16=\(at16.map { Statistics.format($0.p99, 3) + "ms" } ?? "n/a")"
                + " rps_64=\(at64.map { Statistics.format($0.rps, 0) } ?? "n/a")"
                + " redis_rps_64=\(redis64.map { Statistics.format($0.rps, 0) } ?? "n/a")"
        )
    }
}

/// The same request a WireClient sends for a small call: method, timeout header, 16-byte payload,
/// echoed back.
final class EchoWorkload: WireWorkload {
    private let payload = ByteBuffer(repeating: 0x61, count: 16)

    func nextRequest() -> WireRequest {
        WireRequest(method: WireBenchmark.method, timeoutMilliseconds: 5_000, payload: self.payload)
    }

    func check(_ response: WireResponse) throws {
        guard response.payload == self.payload else {
            throw ValidationError("the echo answered other bytes")
        }
    }
}

enum Statistics {
    static func median(_ rows: [WireBenchmark.Row], connections: Int) -> WireBenchmark.Row {
        func mid(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return WireBenchmark.Row(
            connections: connections,
            rps: mid(rows.map(\.rps)),
            p50: mid(rows.map(\.p50)),
            p99: mid(rows.map(\.p99))
        )
    }

    static func format(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }
}
