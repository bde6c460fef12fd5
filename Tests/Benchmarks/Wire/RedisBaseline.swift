import ArgumentParser
import Foundation

/// Runs redis-server (on a free loopback port) and redis-benchmark at the same connection counts.
/// Installs nothing: both binaries must be on PATH (Debian's redis-server and redis-tools).
enum RedisBaseline {
    struct Running {
        var server: ChildProcess
        var port: Int
        var benchmark: String
    }

    static func start() throws -> Running {
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
        progress("redis-server ready on port \(port)")
        return Running(server: redis, port: port, benchmark: benchmark)
    }

    /// One sample sized to last about `seconds`: a quick probe, then the scaled run.
    static func sample(_ redis: Running, connections: Int, seconds: Double) throws -> WireBenchmark.Row {
        let probe = try self.run(redis.benchmark, port: redis.port, connections: connections, requests: 20_000)
        let requests = max(10_000, min(5_000_000, Int(probe.rps * seconds)))
        let row = try self.run(redis.benchmark, port: redis.port, connections: connections, requests: requests)
        progress("redis-benchmark -c \(connections): \(Int(row.rps)) rps")
        return row
    }

    static func run(_ benchmark: String, port: Int, connections: Int, requests: Int) throws -> WireBenchmark.Row {
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
