import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A service executable started as a real process, as docker-compose would run it.
public final class ServiceProcess: Sendable {
    public let pid: pid_t
    /// Where its standard output and error go.
    public let logPath: String
    private let watchdog: Mutex<pid_t?>

    private init(pid: pid_t, logPath: String, watchdog: pid_t) {
        self.pid = pid
        self.logPath = logPath
        self.watchdog = Mutex(watchdog)
    }

    /// The watchdog's pid while it guards the service (nil once the service has been waited for).
    public var watchdogPID: pid_t? { watchdog.withLock { $0 } }

    /// The path of an executable of this package, built beside the test bundle.
    public static func executable(named name: String) throws -> String {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let path = directory.appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw KontoTestingError(.binariesNotFound, "\(name) not found at \(path); build it with `swift build`")
        }
        return path
    }

    /// Starts `executable` with `environment` added to ours. A watchdog ends it with SIGKILL if `owner` (this test
    /// process) ends first by any means, a crash included, so no service outlives its tests.
    public static func start(
        _ executable: String,
        arguments: [String] = [],
        environment: [String: String],
        watching owner: pid_t = getpid()
    ) throws -> ServiceProcess {
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("konto-service-\(UUID().uuidString).log").path
        let pid = try ChildProcess.spawnService(executable, arguments, outputPath: logPath, environment: environment)
        do {
            return ServiceProcess(pid: pid, logPath: logPath, watchdog: try launchWatchdog(guarding: pid, watching: owner))
        } catch {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            throw error
        }
    }

    /// A shell outside this process, as ``TemporaryPostgresCluster``'s: it waits for `owner` to end, then kills the
    /// service. It is retired when the service is waited for, before its pid can be reused.
    private static func launchWatchdog(guarding service: pid_t, watching owner: pid_t) throws -> pid_t {
        try ChildProcess.launchDetached("/bin/sh", ["-c", "tail --pid=\"$KONTO_OWNER\" -f /dev/null; kill -KILL \"$KONTO_SERVICE\""], environment: [
            "KONTO_OWNER": "\(owner)",
            "KONTO_SERVICE": "\(service)",
        ])
    }

    private func retireWatchdog() {
        guard let watchdog = watchdog.withLock({ pid in defer { pid = nil }; return pid }) else { return }
        kill(-watchdog, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(watchdog, &status, 0)
    }

    /// What a command-line run gave: its exit status, standard output and standard error, apart.
    public struct Run: Sendable {
        public let status: Int32
        public let standardOutput: String
        public let standardError: String
    }

    /// Runs `executable` to its end with `input` on its standard input (not a terminal) and `environment` added to ours.
    public static func run(_ executable: String, arguments: [String], environment: [String: String] = [:], input: String = "") async throws -> Run {
        let result = try await ChildProcess.run(executable, arguments, environment: environment, input: input)
        return Run(status: result.status, standardOutput: result.standardOutput, standardError: result.standardError)
    }

    /// What the process has written so far.
    public var output: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Running: present and not exited (a zombie waiting for ``waitForExit(timeout:)`` is not).
    public var isRunning: Bool { ProcessExit.isRunning(pid) }

    public func signal(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Waits for the process to exit and returns its exit code (128 + signal when killed);
    /// nil when `timeout` passes first.
    public func waitForExit(timeout: Duration) async -> Int32? {
        guard await ProcessExit.wait(for: pid, timeout: timeout) else { return nil }
        // Exited but not yet reaped, so its pid cannot have been reused while the watchdog could still kill it.
        retireWatchdog()
        var status: Int32 = 0
        guard waitpid(pid, &status, 0) == pid else { return nil }
        return ChildProcess.exitCode(status)
    }

    /// Stops the process (SIGTERM, then SIGKILL after `grace`) and removes its log.
    public func stop(grace: Duration = .seconds(10)) async {
        signal(SIGTERM)
        if await waitForExit(timeout: grace) == nil {
            signal(SIGKILL)
            _ = await waitForExit(timeout: .seconds(10))
        }
        try? FileManager.default.removeItem(atPath: logPath)
    }
}
