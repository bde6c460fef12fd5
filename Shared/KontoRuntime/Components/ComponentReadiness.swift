import ServiceLifecycle
import Synchronization

/// Whether a component is ready for its dependants; set once, awaited by any number of them.
final class ComponentReadiness: Sendable {
    private struct State {
        var isReady = false
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        /// Waiters whose task stopped waiting before their continuation was stored.
        var abandoned: Set<Int> = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    func markReady() {
        let waiters = self.state.withLock { state in
            state.isReady = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters {
            waiter.resume(returning: true)
        }
    }

    /// True once ready; false when the waiting task is shut down gracefully or cancelled first.
    func wait() async -> Bool {
        let id = self.state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate = self.state.withLock { state -> Bool? in
                    if state.abandoned.remove(id) != nil { return false }
                    if state.isReady { return true }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate {
                    continuation.resume(returning: immediate)
                }
            }
        } onCancelOrGracefulShutdown: {
            let waiter = self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                if !state.isReady { state.abandoned.insert(id) }
                return nil
            }
            waiter?.resume(returning: false)
        }
    }
}
