import Synchronization

/// Runs an operation with a hard time limit.
///
/// The operation runs in its own task and the caller is resumed by whichever comes first, the result or the
/// deadline. On the deadline the operation's task is cancelled but not awaited: a query stuck on a half-dead TCP
/// connection does not react to cancellation, and a task group would wait for it. postgres-nio's pool does cancel a
/// waiting lease when its task is cancelled, so abandoned operations do not pile up in the pool's queue.
public enum OperationTimeout {
    public static func run<Value: Sendable>(
        _ timeout: Duration,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let race = Race<Value>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard race.install(continuation) else { return }
                race.add(Task {
                    do {
                        race.finish(.success(try await operation()))
                    } catch {
                        race.finish(.failure(error))
                    }
                })
                race.add(Task {
                    // Cancelled when the operation finishes first; only a real expiry reports a timeout.
                    guard (try? await Task.sleep(for: timeout)) != nil else { return }
                    race.finish(.failure(OperationTimeoutError(timeout: timeout)))
                })
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// The first result wins; the losers' tasks are cancelled.
    private final class Race<Value: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Value, any Error>?
            var tasks: [Task<Void, Never>] = []
            var outcome: Result<Value, any Error>?
        }

        private let state = Mutex(State())

        /// False when the race was decided (the caller was cancelled) before it began; the continuation is resumed.
        func install(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
            let decided = state.withLock { state -> Result<Value, any Error>? in
                if let outcome = state.outcome { return outcome }
                state.continuation = continuation
                return nil
            }
            if let decided {
                continuation.resume(with: decided)
                return false
            }
            return true
        }

        func add(_ task: Task<Void, Never>) {
            let decided = state.withLock { state -> Bool in
                if state.outcome != nil { return true }
                state.tasks.append(task)
                return false
            }
            if decided { task.cancel() }
        }

        func finish(_ result: Result<Value, any Error>) {
            let taken = state.withLock { state -> (CheckedContinuation<Value, any Error>?, [Task<Void, Never>])? in
                guard state.outcome == nil else { return nil }
                state.outcome = result
                defer { state.continuation = nil; state.tasks = [] }
                return (state.continuation, state.tasks)
            }
            guard let (continuation, tasks) = taken else { return }
            continuation?.resume(with: result)
            for task in tasks { task.cancel() }
        }
    }
}
