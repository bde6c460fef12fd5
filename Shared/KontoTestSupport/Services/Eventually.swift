import KontoWire

/// Calls a service that may not be up yet (a process just started, a database coming back) until it answers.
public enum Eventually {
    /// Repeats `call` while it fails with a retryable wire error, for at most `seconds`; any other error, or a
    /// retryable one after the deadline, is thrown. The client's own reconnect backoff paces the attempts.
    public static func answer<Response: Sendable>(
        within seconds: Int = 60,
        _ call: @Sendable () async throws -> Response
    ) async throws -> Response {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            do {
                return try await call()
            } catch let error as WireError where error.isRetryable && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
