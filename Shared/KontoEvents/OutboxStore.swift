import KontoModel

/// A producer's outbox: the events its changes wrote in the same transactions as the changes, waiting to be
/// published to Notifications.
public protocol OutboxStore: Sendable {
    /// Hands the oldest pending events (at most `limit`, oldest first) to `publish`; once it returns, they are
    /// removed, and not if it throws. Concurrent drains (another replica's relay) wait for each other, so events
    /// are published in order. Returns how many were published.
    func drainOutbox(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int

    /// Calls `changed` whenever events may have been added (by any replica), until cancelled. Returning or throwing
    /// only means the relay falls back to polling until it watches again.
    func watchOutbox(_ changed: @escaping @Sendable () -> Void) async throws
}
