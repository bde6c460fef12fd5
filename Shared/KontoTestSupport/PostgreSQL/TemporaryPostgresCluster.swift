import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server: `initdb` and `pg_ctl` in a temporary directory, on a free
/// loopback port. It can be stopped and started again on the same port (to test outages) and
/// is removed by ``destroy()``.
///
/// When the tests run as root the server runs as the `postgres` user, because PostgreSQL refuses
/// to run as root. It can also run on a host of a ``VirtualNetwork`` (its namespace, its address).
public final class TemporaryPostgresCluster: Sendable {
    public let host: String
    public let port: Int
    public let username = "postgres"
    /// A random password: the server uses SCRAM on TCP, as a real deployment does.
    public let password: String
    /// The cluster's data directory; its path identifies the server's processes.
    public let dataDirectory: String

    private let root: URL
    /// The network namespace the server runs in; nil for the test's own.
    private let namespace: String?
    private let binaries: PostgresBinaries
    private let runAsPostgresUser: Bool
    private let logger: Logger
    private let state = Mutex(State.stopped)
    /// The shell that stops the server when its owner ends.
    private let watchdog = Mutex<pid_t?>(nil)
    var watchdogPID: pid_t? { watchdog.withLock { $0 } }

    private enum State {
        case running
        case stopped
        case destroyed
    }

    private init(root: URL, host: String, namespace: String?, port: Int, password: String, binaries: PostgresBinaries, runAsPostgresUser: Bool, logger: Logger) {
        self.root = root
        self.host = host
        self.namespace = namespace
        self.port = port
        self.password = password
        self.dataDirectory = root.appendingPathComponent("data").path
        self.binaries = binaries
        self.runAsPostgresUser = runAsPostgresUser
        self.logger = logger
    }

    /// Creates a cluster in a new temporary directory and starts it.
    public static func start(logger: Logger = Logger(label: "konto.testing.postgres")) async throws -> TemporaryPostgresCluster {
        try await start(logger: logger, watching: getpid())
    }

    /// Creates a cluster that runs on `host` of a ``VirtualNetwork``, listening on its address.
    public static func start(on host: VirtualNetwork.Host, logger: Logger = Logger(label: "konto.testing.postgres")) async throws -> TemporaryPostgresCluster {
        try await start(logger: logger, watching: getpid(), placement: (host.address, host.namespace))
    }

    /// `owner` is the process whose end, however it comes, stops the server (tests pass another).
    static func start(logger: Logger, watching owner: pid_t, placement: (address: String, namespace: String)? = nil) async throws -> TemporaryPostgresCluster {
        let binaries = try PostgresBinaries.locate()
        let runAsPostgresUser = geteuid() == 0
        let root = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("konto-pg-\(UUID().uuidString.prefix(8).lowercased())")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)

        let cluster = TemporaryPostgresCluster(
            root: root,
            host: placement?.address ?? "127.0.0.1",
            namespace: placement?.namespace,
            port: try freeLoopbackPort(),
            password: randomHex(bytes: 16),
            binaries: binaries,
            runAsPostgresUser: runAsPostgresUser,
            logger: logger
        )
        do {
            // First, so that an owner killed even during initdb leaves nothing behind.
            let watchdog = try cluster.launchWatchdog(watching: owner)
            cluster.watchdog.withLock { $0 = watchdog }
            try await cluster.initialise()
            try await cluster.start()
        } catch {
            try? await cluster.destroy()
            throw error
        }
        return cluster
    }

    /// Starts the server (again) on the same port with the same data.
    public func start() async throws {
        let options = [
            "-p", "\(port)",
            "-c", "listen_addresses=\(host)",
            "-k", root.appendingPathComponent("socket").path,
            "-c", "max_connections=300",
            // Throwaway data: durability only slows the tests down.
            "-c", "fsync=off",
            "-c", "synchronous_commit=off",
            "-c", "full_page_writes=off",
        ].joined(separator: " ")
        // In a namespace the server is started inside it (pg_ctl's server inherits it) and stopped from outside.
        try await runServerProgram(binaries.pgCtl, ["start", "-w", "-t", "60", "-D", dataDirectory, "-l", root.appendingPathComponent("server.log").path, "-o", options], inNamespace: true)
        state.withLock { $0 = .running }
        ClusterReaper.register(dataDirectory: dataDirectory)
        logger.debug("temporary postgres started", metadata: ["konto.port": "\(port)", "konto.data_directory": "\(dataDirectory)"])
    }

    /// Stops the server (fast shutdown: open sessions are ended) and keeps its data.
    public func stop() async throws {
        let wasRunning = state.withLock { state -> Bool in
            defer { if state == .running { state = .stopped } }
            return state == .running
        }
        guard wasRunning else { return }
        let postmaster = postmasterPID
        try await pgCtl(["stop", "-w", "-t", "60", "-m", "fast", "-D", dataDirectory])
        if let postmaster, !(await ProcessExit.wait(for: postmaster, timeout: .seconds(30))) {
            throw KontoTestingError(.commandFailed, "postgres \(postmaster) still running 30 s after pg_ctl stop")
        }
        ClusterReaper.unregister(dataDirectory: dataDirectory)
        logger.debug("temporary postgres stopped", metadata: ["konto.port": "\(port)"])
    }

    /// Stops the server and removes its directory. Safe to call more than once.
    public func destroy() async throws {
        try await stop()
        let alreadyDestroyed = state.withLock { state -> Bool in
            defer { state = .destroyed }
            return state == .destroyed
        }
        guard !alreadyDestroyed else { return }
        try FileManager.default.removeItem(at: root)
        retireWatchdog()
    }

    public var isRunning: Bool { state.withLock { $0 == .running } }

    /// The server's main process, from the pid file it keeps while it runs.
    public var postmasterPID: pid_t? {
        guard let contents = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8) else { return nil }
        return contents.split(separator: "\n").first.flatMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Connection settings for the `postgres` maintenance database as the superuser.
    public var maintenanceDatabase: PostgresTestDatabase {
        PostgresTestDatabase(host: host, port: port, username: username, password: password, database: "postgres")
    }

    // MARK: Setup

    private func initialise() async throws {
        let passwordFile = root.appendingPathComponent("pwfile")
        try Data(password.utf8).write(to: passwordFile)
        if runAsPostgresUser {
            try await ChildProcess.check("/bin/chown", ["-R", "postgres:postgres", root.path])
        }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("socket"), withIntermediateDirectories: true)
        if runAsPostgresUser {
            try await ChildProcess.check("/bin/chown", ["postgres:postgres", root.appendingPathComponent("socket").path])
        }
        try await runServerProgram(binaries.initdb, [
            "-D", dataDirectory,
            "-U", username,
            "--pwfile", passwordFile.path,
            "--auth-local", "trust",
            "--auth-host", "scram-sha-256",
            "-E", "UTF8",
            "--no-locale",
            "--no-sync",
        ])
        try? FileManager.default.removeItem(at: passwordFile)
        // initdb lets TCP in from loopback only; on a host of a virtual network the clients are other hosts.
        if namespace != nil {
            let hba = URL(fileURLWithPath: dataDirectory).appendingPathComponent("pg_hba.conf")
            let handle = try FileHandle(forWritingTo: hba)
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("host all all 0.0.0.0/0 scram-sha-256\n".utf8))
        }
    }

    /// A test process that crashes runs no `atexit` handler (see ``ClusterReaper``). The watchdog,
    /// a shell outside it, waits for it to end by any means, then stops the server and removes its
    /// directory. Paths go through its environment so that only the server's own command line
    /// names the data directory (what `pgrep -f` finds).
    private func launchWatchdog(watching owner: pid_t) throws -> pid_t {
        let stop = runAsPostgresUser ? "\"$KONTO_RUNUSER\" -u postgres -- \"$KONTO_PG_CTL\"" : "\"$KONTO_PG_CTL\""
        let script = "tail --pid=\"$KONTO_OWNER\" -f /dev/null; "
            + "[ -f \"$KONTO_ROOT/data/postmaster.pid\" ] && \(stop) stop -m immediate -D \"$KONTO_ROOT/data\"; "
            + "rm -rf \"$KONTO_ROOT\""
        return try ChildProcess.launchDetached("/bin/sh", ["-c", script], environment: [
            "KONTO_OWNER": "\(owner)",
            "KONTO_ROOT": root.path,
            "KONTO_PG_CTL": binaries.pgCtl,
            "KONTO_RUNUSER": Self.runuser,
        ])
    }

    /// After a normal teardown the watchdog has nothing left to guard.
    private func retireWatchdog() {
        guard let pid = watchdog.withLock({ pid in defer { pid = nil }; return pid }) else { return }
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }

    private func pgCtl(_ arguments: [String]) async throws {
        try await runServerProgram(binaries.pgCtl, arguments)
    }

    private func runServerProgram(_ program: String, _ arguments: [String], inNamespace: Bool = false) async throws {
        var command = runAsPostgresUser ? [Self.runuser, "-u", "postgres", "--", program] + arguments : [program] + arguments
        if inNamespace, let namespace {
            command = [VirtualNetwork.ip, "netns", "exec", namespace] + command
        }
        try await ChildProcess.check(command[0], Array(command.dropFirst()))
    }

    private static var runuser: String {
        ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "runuser"
    }
}

extension TemporaryPostgresCluster {
    /// Asks the kernel for a port no one listens on right now.
    static func freeLoopbackPort() throws -> Int {
        try FreePort.loopback()
    }

    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }
}
