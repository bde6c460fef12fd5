/// Tuning of a ``ProfileStore``.
public struct ProfileStoreOptions: Sendable, Hashable {
    public var limits: ProfileLimits
    /// The longest one storage call may take before it fails as `profile.storageUnavailable`. The pool alone
    /// would make a caller wait for a connection while the database is down (up to its 60 s circuit breaker).
    public var operationTimeout: Duration
    /// How often a modify without an expected version re-reads and retries after losing a race. Every lost race
    /// means another modify succeeded, so this many attempts always succeed with fewer concurrent writers.
    public var maximumModifyAttempts: Int

    public init(limits: ProfileLimits = ProfileLimits(), operationTimeout: Duration = .milliseconds(2500), maximumModifyAttempts: Int = 100) {
        precondition(maximumModifyAttempts > 0, "a modify needs at least one attempt")
        self.limits = limits
        self.operationTimeout = operationTimeout
        self.maximumModifyAttempts = maximumModifyAttempts
    }
}
