import KontoErrors
/// How Notifications delivers: claim visibility, retries and their back-off, dead letters, and how often an idle
/// consumer looks again for deliveries that became due by time (a retry's back-off, a timed-out claim).
public struct NotificationOptions: Sendable {
    /// How long a claimed delivery is invisible to the group's other consumers before it is delivered again.
    public var visibilityTimeout: Duration = .seconds(30)
    /// Claims of one delivery (negative acks and timed-out claims alike) before it goes to dead letter.
    public var maxAttempts = 8
    /// The first retry's delay; each further one doubles it, up to ``retryMaximum``.
    public var retryBase: Duration = .seconds(1)
    public var retryMaximum: Duration = .seconds(300)
    /// The longest an idle consumer waits before looking again; new events wake it at once (same process).
    public var pollInterval: Duration = .seconds(1)
    /// Deliveries claimed per query at most (never more than the subscription's free credit).
    public var claimBatch = 64
    /// Delivered events are deleted this long after they occurred (events a group has still queued, or in dead
    /// letter, stay until it has processed them or the dead letter is replayed).
    public var retention: Duration = .seconds(30 * 86_400)
    /// A deleted account's events are erased once every group has processed its deletion, or this long after the
    /// deletion was stored however far behind a group is.
    public var erasureGrace: Duration = .seconds(86_400)
    /// How often erasure and retention run.
    public var sweepInterval: Duration = .seconds(10)

    /// How long a cache-holding tail reader stays live (awaited by `notifications.tailBarrier`) after the replica
    /// serving its tail last vouched for it, and how often that replica does. A reader's own side must notice a
    /// dead tail sooner than the lease ends (the gateway pings Notifications every second when idle): see
    /// docs/SCALING.md.
    public var tailReaderLease: Duration = .seconds(5)
    public var tailReaderRenewal: Duration = .seconds(1)
    /// A cache-holding reader that leaves an event unacknowledged this long has its tail ended (and its lease given
    /// up), so barriers stop waiting for a reader that is gone or stuck; its cache empties as with any ended tail.
    public var tailAcknowledgementDeadline: Duration = .seconds(2)

    public init() {}

    /// The delay before attempt `attempts + 1`, after `attempts` failed ones.
    public func retryDelay(afterAttempts attempts: Int) -> Duration {
        Backoff(initial: retryBase, maximum: retryMaximum).delay(afterFailures: max(attempts, 1))
    }
}
