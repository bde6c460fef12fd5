import KontoErrors
import Logging

/// A start-up step that waits for a dependency (migrations while the database is not reachable yet): tried again
/// with exponential backoff until it succeeds or the process shuts down.
public enum SetupRetry {
    /// Runs `body` until it succeeds, logging each failure (its type only: errors may quote secrets or values).
    /// - Throws: `CancellationError` when cancelled (shutdown) before it succeeded.
    public static func untilSuccess(
        _ step: String,
        logger: Logger,
        backoff: Backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(5)),
        _ body: () async throws -> Void
    ) async throws {
        var attempts = backoff.attempts()
        while true {
            do {
                try await body()
                return
            } catch where !Task.isCancelled {
                let delay = attempts.failed()
                logger.warning("start-up step failed; retrying", metadata: [
                    "konto.step": "\(step)",
                    "konto.error": "\(String(reflecting: type(of: error)))",
                    "konto.retry_in_ms": "\(delay.components.seconds * 1_000 + delay.components.attoseconds / 1_000_000_000_000_000)",
                ])
                try await Task.sleep(for: delay)
            } catch {
                throw CancellationError()
            }
        }
    }
}
