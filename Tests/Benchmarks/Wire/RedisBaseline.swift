import ArgumentParser
import Foundation

/// Runs redis-server (on a free loopback port) and redis-benchmark at the same connection counts.
/// Installs nothing: both binaries must be on PATH (Debian's redis-server and redis-tools).
enum RedisBaseline {
    static func measure(connections: [Int], runs: Int, seconds: Double) throws -> [WireBenchmark.Row] {
        guard let server = ChildProcess.which("redis-server"), let benchmark = ChildProcess.which("redis-benchmark") else {
            throw ValidationError("redis-server and redis-benchmark must be installed (apt-get install redis-server), or pass --no-redis")
        }
        let port = Int.random(in: 20_000..<30_000)
        let redis = try ChildProcess.start(
            server,
            ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"],
            readyPrefix: nil,
            readyContains: "Ready to accept connections"
        )
        defer { redis.stop() }
        progress("redis-server ready on port \(port)")

        var rows: [WireBenchmark.Row] = []
        for count in connections {
            var samples: [WireBenchmark.Row] = []
            for _ in 0..<runs {
                // Size the run to last about as long as ours: a quick probe, then scale.
                let probe = try self.run(benchmark, port: port, connections: count, requests: 20_000)
                let requests = max(10_000, min(5_000_000, Int(probe.rps * seconds)))
                samples.append(try self.run(benchmark, port: port, connections: count, requests: requests))
                progress("redis-benchmark -c \(count): \(Int(samples.last!.rps)) rps")
            }
            rows.append(Statistics.median(samples, connections: count))
        }
        return rows
    }

    private static func run(_ benchmark: String, port: Int, connections: Int, requests: Int) throws -> WireBenchmark.Row {
        let output = try ChildProcess.output(benchmark, [
            "-h", "127.0.0.1", "-p", "\(port)", "-t", "ping", "-c", "\(connections)", "-n", "\(requests)", "-P", "1", "--csv",
        ])
        // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
        for line in output.split(separator: "\n") where line.hasPrefix("\"PING_MBULK\"") {
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            guard fields.count >= 7, let rps = Double(fields[1]), let p50 = Double(fields[4]), let p99 = Double(fields[6]) else { break }
            return WireBenchmark.Row(connections: connections, rps: rps, p50: p50, p99: p99)
        }
        throw ValidationError("could not parse redis-benchmark output: \(output)")
    }
}

func progress(_ message: String) {
    FileHandle.standardError.write(Data("[konto-bench] \(message)\n".utf8))
}
