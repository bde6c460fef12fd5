import Synchronization

/// Wakes waiting consumers when something happened (an event stored, an outcome read), with a timeout.
///
/// Waiters pass the generation they saw before looking for work: a notification between their look and their
/// wait is not lost, the wait returns at once.
public final class Wakeup: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public var generation: UInt64 { state.withLock { $0.generation } }

    public func notify() {
        let waiters = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    /// Returns once notified after `generation`, after `timeout`, or when the task is cancelled.
    public func wait(after generation: UInt64, timeout: Duration) async {
        let id = state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.resume(id)
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            self.resume(id)
        }
    }

    private func resume(_ id: UInt64) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
