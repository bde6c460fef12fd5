import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process the test converses with: its output (standard output and error together) is read line by line
/// while it runs, and a line may be answered on its standard input. The run is bounded: past `bound` the child gets
/// SIGTERM (to end as it can, e.g. save what it saw), and 15 s later its whole process group SIGKILL.
///
/// Started by ``ChildProcess``'s `posix_spawn` rather than Foundation's `Process`: the child gets no blocked signals
/// from the test's threads (a SIGTERM or SIGALRM must reach it), a process group of its own (so that what it started,
/// a browser, is ended with it), and none of the test process's descriptors. Every blocking call (read, wait) is on a
/// thread of its own, never on a concurrency thread.
public enum ConversingProcess {
    public struct Run: Sendable {
        /// The exit code, 128 + the signal for a child killed by one.
        public let status: Int32
        /// Every line it wrote, in order.
        public let output: String
        /// It was still running after `bound`.
        public let timedOut: Bool
    }

    /// Runs `executable` with `environment` added to ours. `answer` sees every line as it comes; what it returns (if
    /// anything) is written to the child's standard input, followed by a newline.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String],
        bound: Duration,
        answer: (String) async -> String?
    ) async throws -> Run {
        let child = try Child.spawn(executable, arguments, environment: environment)
        // True when it had to end the child.
        let watchdog = Task { () -> Bool in
            do { try await Task.sleep(for: bound) } catch { return false }
            child.signal(SIGTERM)
            try? await Task.sleep(for: .seconds(15))
            child.signalGroup(SIGKILL)
            return true
        }
        var output = ""
        for await line in child.lines {
            output += line + "\n"
            if let reply = await answer(line) {
                child.send(reply + "\n")
            }
        }
        let status = await child.exit.value
        watchdog.cancel()
        child.closeInput()
        return Run(status: status, output: output, timedOut: await watchdog.value)
    }

    /// The spawned child: its pid (also its process group's id), its output's lines, its exit.
    private final class Child: Sendable {
        let pid: pid_t
        let lines: AsyncStream<String>
        /// The exit code, once it has exited (and what was left of its process group was killed).
        let exit: Task<Int32, Never>
        /// Our end of its standard input, a socket (written with MSG_NOSIGNAL: a write after it exited fails with
        /// EPIPE instead of raising SIGPIPE in the test process).
        private let input: Int32
        /// Set once the child is reaped: after that its pid may belong to another process, so no more signals.
        private let reaped: Reaped

        private final class Reaped: Sendable {
            let flag = Mutex(false)
        }

        private init(pid: pid_t, output: Int32, input: Int32) {
            self.pid = pid
            self.input = input
            let reaped = Reaped()
            self.reaped = reaped
            let (lines, continuation) = AsyncStream.makeStream(of: String.self)
            self.lines = lines
            Thread {
                var pending: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 8192)
                while true {
                    let count = read(output, &chunk, chunk.count)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    pending.append(contentsOf: chunk[0..<count])
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                        pending.removeSubrange(...newline)
                    }
                }
                if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
                close(output)
                continuation.finish()
            }.start()
            exit = Task {
                await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
                    Thread {
                        // Waited for without reaping first: while the child is a zombie its pid, the process group's
                        // id, cannot be reused, so what is left of the group (a browser it could not quit) is killed
                        // safely; then it is reaped.
                        var info = siginfo_t()
                        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == -1 && errno == EINTR {}
                        kill(-pid, SIGKILL)
                        var status: Int32 = 0
                        reaped.flag.withLock { reaped in
                            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                            reaped = true
                        }
                        continuation.resume(returning: ChildProcess.exitCode(status))
                    }.start()
                }
            }
        }

        func signal(_ signal: Int32) {
            reaped.flag.withLock { reaped in if !reaped { _ = kill(pid, signal) } }
        }

        func signalGroup(_ signal: Int32) {
            reaped.flag.withLock { reaped in if !reaped { _ = kill(-pid, signal) } }
        }

        func send(_ text: String) {
            var bytes = Array(text.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { Glibc.send(input, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                bytes = bytes.dropFirst(written)
            }
        }

        func closeInput() {
            close(input)
        }

        static func spawn(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Child {
            // Close-on-exec everywhere: no other child the test process starts meanwhile may hold these open (a held
            // write end would keep the output from ever ending). dup2 onto 0, 1 and 2 clears it for this child.
            // Sockets rather than pipes: socketpair takes SOCK_CLOEXEC, and Glibc's module does not import pipe2.
            func pair() throws -> [Int32] {
                var ends: [Int32] = [-1, -1]
                guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                    throw KontoTestingError(.commandFailed, "socketpair: \(String(cString: strerror(errno)))")
                }
                return ends
            }
            let outputPair = try pair()
            let inputPair: [Int32]
            do { inputPair = try pair() } catch {
                close(outputPair[0]); close(outputPair[1])
                throw error
            }
            defer {
                close(outputPair[1])
                close(inputPair[1])
            }

            let pid: pid_t
            do {
                pid = try ChildProcess.spawn(executable, arguments, environment: environment, ownProcessGroup: true) { actions in
                    posix_spawn_file_actions_adddup2(&actions, inputPair[1], 0)
                    posix_spawn_file_actions_adddup2(&actions, outputPair[1], 1)
                    posix_spawn_file_actions_adddup2(&actions, outputPair[1], 2)
                }
            } catch {
                close(outputPair[0]); close(inputPair[0])
                throw error
            }
            return Child(pid: pid, output: outputPair[0], input: inputPair[0])
        }
    }
}
