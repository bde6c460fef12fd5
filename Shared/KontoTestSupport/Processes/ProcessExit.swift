import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Waits for a process that is not our child to exit.
///
/// `pg_ctl stop -w` returns when the postmaster has removed its pid file, a moment before the
/// process itself is gone; a caller promised "no server left running" must wait for the exit.
/// A pidfd becomes readable when its process terminates: an event, not a polling guess.
enum ProcessExit {
    /// Returns true when the process has exited (or never existed), false when `timeout` passed first.
    static func wait(for pid: pid_t, timeout: Duration) async -> Bool {
        guard let pidfd = openPidfd(pid) else {
            // No such process (already gone) or no pidfd support: nothing to wait on.
            return !isRunning(pid)
        }
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread {
                var descriptor = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
                var ready: Int32
                repeat { ready = poll(&descriptor, 1, milliseconds) } while ready == -1 && errno == EINTR
                close(pidfd)
                continuation.resume(returning: ready > 0)
            }.start()
        }
    }

    /// Running means present and not a zombie (exited, not yet reaped by whatever adopted it).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = stat.range(of: ") ", options: .backwards)
        else { return false }
        return stat[afterName.upperBound...].first != "Z"
    }

    private typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32

    /// glibc 2.36 has `pidfd_open`, but Swift's Glibc module does not import it.
    private static let pidfdOpen: PidfdOpen? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "pidfd_open") else { return nil }
        return unsafeBitCast(symbol, to: PidfdOpen.self)
    }()

    /// Whether this system waits on exits by event (Linux 5.3+, glibc 2.36+).
    static var waitsByEvent: Bool { pidfdOpen != nil }

    private static func openPidfd(_ pid: pid_t) -> Int32? {
        guard let pidfdOpen else { return nil }
        let fd = pidfdOpen(pid, 0)
        return fd >= 0 ? fd : nil
    }
}
