import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to completion without blocking a Swift concurrency thread.
///
/// `posix_spawn` and a `waitpid` on a thread of its own, rather than Foundation's `Process`,
/// whose termination handler was seen never to fire for short-lived children here (they stayed
/// zombies and the test hung). Output goes to a file, not a pipe: `pg_ctl start` leaves a server
/// running that must not hold a reader's pipe open.
enum ChildProcess {
    struct Result: Sendable {
        let status: Int32
        let output: String
    }

    static func run(_ executable: String, _ arguments: [String]) async throws -> Result {
        let outputPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("konto-cmd-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }

        let pid = try spawn(executable, arguments, outputPath: outputPath)
        let status = await waitForExit(pid)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return Result(status: exitCode(status), output: output)
    }

    /// Runs a command and throws, with the command's output, when it exits non-zero.
    @discardableResult
    static func check(_ executable: String, _ arguments: [String]) async throws -> String {
        let result = try await run(executable, arguments)
        guard result.status == 0 else {
            let name = URL(fileURLWithPath: executable).lastPathComponent
            throw KontoTestingError(
                .commandFailed,
                "\(name) \(arguments.first ?? "") exited with status \(result.status): \(result.output.suffix(2000))"
            )
        }
        return result.output
    }

    /// Starts a command in a process group of its own and does not wait for it: a watchdog that
    /// must outlive the caller and not share its Ctrl-C. `environment` is added to ours.
    @discardableResult
    static func launchDetached(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> pid_t {
        try spawn(executable, arguments, outputPath: "/dev/null", environment: environment, ownProcessGroup: true)
    }

    /// Starts a long-running service whose output goes to `outputPath`; the caller waits for it.
    static func spawnService(_ executable: String, _ arguments: [String], outputPath: String, environment: [String: String]) throws -> pid_t {
        try spawn(executable, arguments, outputPath: outputPath, environment: environment)
    }

    /// Runs a command with `input` as its standard input and its standard output and error kept apart (a command
    /// line tool's answer and its messages); waits for it on a thread of its own.
    static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String],
        input: String
    ) async throws -> (status: Int32, standardOutput: String, standardError: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("konto-run-\(UUID().uuidString)").path
        let (inputPath, outputPath, errorPath) = (base + ".in", base + ".out", base + ".err")
        defer { [inputPath, outputPath, errorPath].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        guard FileManager.default.createFile(atPath: inputPath, contents: Data(input.utf8)) else {
            throw KontoTestingError(.commandFailed, "cannot write \(inputPath)")
        }
        let pid = try spawn(executable, arguments, inputPath: inputPath, outputPath: outputPath, errorPath: errorPath, environment: environment)
        let status = await waitForExit(pid)
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return (exitCode(status), read(outputPath), read(errorPath))
    }

    /// The child's raw wait status, waited for on a thread of its own (never blocking a concurrency thread).
    private static func waitForExit(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let waiter = Thread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                continuation.resume(returning: status)
            }
            waiter.start()
        }
    }

    private static func spawn(
        _ executable: String,
        _ arguments: [String],
        inputPath: String = "/dev/null",
        outputPath: String,
        errorPath: String? = nil,
        environment: [String: String] = [:],
        ownProcessGroup: Bool = false
    ) throws -> pid_t {
        try spawn(executable, arguments, environment: environment, ownProcessGroup: ownProcessGroup) { actions in
            posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            if let errorPath {
                posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            } else {
                posix_spawn_file_actions_adddup2(&actions, 1, 2)
            }
        }
    }

    /// Starts `executable` with its standard input, output and error as `standardFiles` sets them up, no other
    /// descriptor of ours, no blocked signal, and `environment` added to ours.
    static func spawn(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String],
        ownProcessGroup: Bool,
        standardFiles: (inout posix_spawn_file_actions_t) -> Void
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        standardFiles(&actions)
        try closeInheritedDescriptors(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Swift's and Dispatch's threads block most signals; a child would inherit that mask, and
        // e.g. pgbench's -T alarm (SIGALRM) or a service's SIGTERM would never arrive.
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if ownProcessGroup {
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)

        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { _, new in new }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw KontoTestingError(.commandFailed, "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return pid
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc 2.34+ has it; Swift's Glibc module does not import it.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    /// Children must not inherit the test process's descriptors: a server left running by
    /// `pg_ctl`, or a watchdog, would otherwise hold a test's listening socket open and keep its
    /// port busy after the test closed it.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) throws {
        guard let addCloseFrom, addCloseFrom(&actions, 3) == 0 else {
            throw KontoTestingError(.commandFailed, "posix_spawn_file_actions_addclosefrom_np is not available (glibc 2.34+ needed)")
        }
    }

    /// The exit code, or 128 + the signal number for a child killed by a signal (as a shell does).
    static func exitCode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
