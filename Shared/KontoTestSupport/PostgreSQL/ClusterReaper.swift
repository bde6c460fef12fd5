import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Stops servers that a test process leaves running when it exits without tearing them down
/// (a failed precondition, `exit()` from a test runner), so no postgres outlives its tests.
///
/// It sends SIGQUIT (PostgreSQL's immediate shutdown) to the postmaster named in
/// `postmaster.pid`: a signal is safe at exit time, where spawning `pg_ctl` is not.
enum ClusterReaper {
    private static let running = Mutex<Set<String>>([])
    private static let installed = Mutex(false)

    static func register(dataDirectory: String) {
        installed.withLock { installed in
            guard !installed else { return }
            installed = true
            atexit { ClusterReaper.reapAll() }
        }
        _ = running.withLock { $0.insert(dataDirectory) }
    }

    static func unregister(dataDirectory: String) {
        _ = running.withLock { $0.remove(dataDirectory) }
    }

    private static func reapAll() {
        let directories = running.withLock { $0 }
        for directory in directories {
            guard
                let contents = try? String(contentsOfFile: directory + "/postmaster.pid", encoding: .utf8),
                let firstLine = contents.split(separator: "\n").first,
                let pid = pid_t(firstLine.trimmingCharacters(in: .whitespaces))
            else { continue }
            kill(pid, SIGQUIT)
        }
    }
}
