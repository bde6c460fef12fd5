// Polling a condition with a deadline, never a fixed sleep.

/// Polls a condition until it holds, failing after `timeout`.
func waitUntil(timeout: Duration = .seconds(5), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            throw WaitTimedOut()
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

struct WaitTimedOut: Error {}
