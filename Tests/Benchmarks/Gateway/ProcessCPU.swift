import Foundation

/// CPU time of processes, from /proc (Linux): what `konto-bench gateway` divides by the requests to say where the
/// time of a request goes.
enum ProcessCPU {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// A process's user and system CPU so far, in seconds (`utime` + `stime` of /proc/PID/stat); nil once it is gone.
    static func seconds(of pid: pid_t) -> Double? {
        guard let fields = statFields(of: pid), fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / ticksPerSecond
    }

    /// `parent` and every process whose parent it is (PostgreSQL's postmaster and its backends).
    static func family(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return [parent] + entries.compactMap { pid_t($0) }.filter { pid in
            statFields(of: pid).flatMap { $0.count > 1 ? pid_t($0[1]) : nil } == parent
        }
    }

    /// The CPU of this process's reaped children (wrk, once it has exited), in seconds.
    static func reapedChildrenSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The fields of /proc/PID/stat after the command (which is in parentheses and may hold spaces): state first,
    /// then ppid, …, utime at index 11 and stime at 12.
    private static func statFields(of pid: pid_t) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// CPU seconds of each named group of processes, read now; the difference of two snapshots is a run's.
    struct Snapshot {
        var seconds: [String: Double]

        init(_ groups: [(String, [pid_t])], loadGenerator: Bool = true) {
            var seconds: [String: Double] = [:]
            for (name, pids) in groups {
                seconds[name] = pids.compactMap(ProcessCPU.seconds(of:)).reduce(0, +)
            }
            if loadGenerator { seconds["wrk"] = ProcessCPU.reapedChildrenSeconds() }
            self.seconds = seconds
        }

        /// Microseconds of CPU per request in each group between `earlier` and this snapshot.
        func microsecondsPerRequest(since earlier: Snapshot, requests: Int) -> [String: Double] {
            let perRequest = 1_000_000 / Double(max(requests, 1))
            return Dictionary(uniqueKeysWithValues: seconds.map { name, now in (name, (now - (earlier.seconds[name] ?? 0)) * perRequest) })
        }
    }
}
