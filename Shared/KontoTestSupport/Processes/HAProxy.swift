import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Debian's HAProxy in front of several gateways, as a deployment's load balancer: round robin, each server checked
/// on `/health/ready` every 300 ms (two failures take it out, two passes bring it back), a failed connection retried
/// on the other server. Its statistics socket tells which servers it counts as up and takes them in and out.
///
/// A request whose gateway died under it (HAProxy's own 502 and 504) and one with no gateway left (its 503) are
/// answered as the gateway answers a service that is gone: 503 with Retry-After and a problem document, since the
/// outcome is unknown and the client may try again (docs/DEPLOYMENT.md shows the same for a deployment's balancer).
public final class HAProxy: Sendable {
    public struct Server: Sendable {
        public var name: String
        public var address: String
        public var port: Int

        public init(name: String, address: String, port: Int) {
            self.name = name
            self.address = address
            self.port = port
        }
    }

    public static let executable = ["/usr/sbin/haproxy", "/usr/bin/haproxy"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Where clients reach it (loopback).
    public let port: Int
    private let statsSocket: String
    private let configurationPath: String
    private let process: ServiceProcess

    public var url: String { "http://127.0.0.1:\(port)" }

    private init(port: Int, statsSocket: String, configurationPath: String, process: ServiceProcess) {
        self.port = port
        self.statsSocket = statsSocket
        self.configurationPath = configurationPath
        self.process = process
    }

    /// Starts HAProxy balancing `servers`; returns once it listens. `serverTimeout` bounds a request at a server (above
    /// the gateways' own upstream bound, so that their 503 is what a client sees).
    public static func start(servers: [Server], serverTimeout: Duration = .seconds(15)) async throws -> HAProxy {
        guard let executable else {
            throw KontoTestingError(.toolNotInstalled, "haproxy is not installed (scripts/test.sh installs Debian's)")
        }
        let port = try FreePort.loopback()
        let configurationPath = FileManager.default.temporaryDirectory.appendingPathComponent("konto-haproxy-\(UUID().uuidString).cfg").path
        let problem = #"{"type":"/problems/gateway.serviceUnavailable","title":"Service Unavailable","status":503,"code":"gateway.serviceUnavailable","detail":"No gateway could answer; try again shortly."}"#
        let unavailablePath = configurationPath + ".503.http"
        let statsSocket = configurationPath + ".sock"
        try ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\nCache-Control: no-store\r\n"
            + "Content-Length: \(problem.utf8.count)\r\n\r\n" + problem).write(toFile: unavailablePath, atomically: true, encoding: .utf8)
        let lines = [
            "global",
            "    maxconn 4096",
            "    log stdout format raw local0",
            "    stats socket \(statsSocket) mode 600 level admin",
            "defaults",
            "    mode http",
            "    log global",
            "    option httplog",
            "    timeout connect 1s",
            "    timeout client 60s",
            "    timeout server \(serverTimeout.components.seconds)s",
            "    option redispatch",
            "    retries 2",
            "    errorfile 502 \(unavailablePath)",
            "    errorfile 503 \(unavailablePath)",
            "    errorfile 504 \(unavailablePath)",
            "frontend konto",
            "    bind 127.0.0.1:\(port)",
            "    option forwardfor",
            "    default_backend gateways",
            "backend gateways",
            "    balance roundrobin",
            "    option httpchk GET /health/ready",
            "    http-check expect status 200",
            "    default-server inter 300ms fall 2 rise 2",
        ] + servers.map { "    server \($0.name) \($0.address):\($0.port) check" }
        try (lines.joined(separator: "\n") + "\n").write(toFile: configurationPath, atomically: true, encoding: .utf8)
        let check = try await ServiceProcess.run(executable, arguments: ["-c", "-f", configurationPath])
        guard check.status == 0 else {
            throw KontoTestingError(.commandFailed, "haproxy refused its configuration: \(check.standardOutput) \(check.standardError)")
        }
        let process = try ServiceProcess.start(executable, arguments: ["-db", "-f", configurationPath], environment: [:])
        let proxy = HAProxy(port: port, statsSocket: statsSocket, configurationPath: configurationPath, process: process)
        let deadline = ContinuousClock.now + .seconds(30)
        while (try? await proxy.serverStates()) == nil {
            guard ContinuousClock.now < deadline, process.isRunning else {
                let output = process.output
                await proxy.stop()
                throw KontoTestingError(.serverDidNotStart, "haproxy did not start: \(output.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return proxy
    }

    public struct ServerState: Sendable {
        /// `UP`, `DOWN`, `UP 1/2` (going down), `DOWN 1/2` (coming back), `MAINT` (taken out), …
        public var status: String
        /// Requests (sessions) it has been given so far.
        public var sessions: Int
    }

    /// Each server's state as HAProxy counts it (`show stat` on its statistics socket, CSV).
    public func serverStates() async throws -> [String: ServerState] {
        let csv = try command("show stat")
        let rows = csv.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        // The header line starts with "# ".
        guard let header = rows.first.map({ $0.map { $0.replacingOccurrences(of: "# ", with: "") } }),
              let status = header.firstIndex(of: "status"), let name = header.firstIndex(of: "svname"), let total = header.firstIndex(of: "stot")
        else {
            throw KontoTestingError(.commandFailed, "haproxy's statistics without status, svname and stot columns: \(csv.prefix(200))")
        }
        var states: [String: ServerState] = [:]
        for row in rows.dropFirst() where row.count > max(status, total) && row[0] == "gateways" && !["FRONTEND", "BACKEND"].contains(row[name]) {
            states[row[name]] = ServerState(status: row[status], sessions: Int(row[total]) ?? 0)
        }
        return states
    }

    /// Takes `server` out of the rotation (`false`: HAProxy's maintenance mode) or puts it back.
    public func setServer(_ server: String, enabled: Bool) throws {
        _ = try command("\(enabled ? "enable" : "disable") server gateways/\(server)")
    }

    /// One command on the statistics socket (HAProxy's runtime API: a line in, text until it closes).
    private func command(_ line: String) throws -> String {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw KontoTestingError(.commandFailed, "socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(statsSocket.utf8)
        guard path.count < MemoryLayout.size(ofValue: address.sun_path) else { throw KontoTestingError(.commandFailed, "socket path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            bytes.copyBytes(from: path)
            bytes[path.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw KontoTestingError(.commandFailed, "connect \(statsSocket): \(String(cString: strerror(errno)))") }
        let request = Array((line + "\n").utf8)
        guard write(descriptor, request, request.count) == request.count else { throw KontoTestingError(.commandFailed, "write to haproxy's socket") }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        return String(decoding: answer, as: UTF8.self)
    }

    /// Its log: a line per request (`option httplog`: server, status, termination state) and per health change.
    public var log: String { process.output }

    public func stop() async {
        await process.stop()
        try? FileManager.default.removeItem(atPath: configurationPath)
        try? FileManager.default.removeItem(atPath: configurationPath + ".503.http")
        try? FileManager.default.removeItem(atPath: statsSocket)
    }
}
