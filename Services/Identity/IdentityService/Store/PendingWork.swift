import ServiceLifecycle
import Synchronization

/// Work an answer does not wait for, tracked so that shutdown (and a test) can wait until it is done.
///
/// A sign-in code's request answers before its account is even looked up: whether a code was made and mailed must not
/// show in the answer's timing (no enumeration). The rest runs here; it is short and bounded (a few statements).
public final class PendingWork: Sendable {
    private struct State {
        var next = 0
        var tasks: [Int: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Starts `body`; it ends by itself (nothing cancels it).
    func run(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            let id = state.next
            state.next += 1
            // Registered under the lock the task takes to unregister itself, so it cannot end before it is known.
            state.tasks[id] = Task {
                await body()
                self.state.withLock { _ = $0.tasks.removeValue(forKey: id) }
            }
        }
    }

    /// Returns once every piece of work started before or while waiting has ended.
    public func finish() async {
        while true {
            let running = state.withLock { Array($0.tasks.values) }
            if running.isEmpty { return }
            for task in running {
                await task.value
            }
        }
    }
}

/// Lets the pending work end on a graceful shutdown before the storage it writes to closes (it stops after the wire
/// server: no new work comes in by then).
struct PendingWorkDrain: Service {
    let work: PendingWork

    func run() async throws {
        try? await gracefulShutdown()
        await work.finish()
    }
}
