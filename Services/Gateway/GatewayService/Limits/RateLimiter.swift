/// Token buckets per key (a client address and a rule's name): a pure state machine the middleware drives with the
/// clock, so its decisions are tested without waiting.
///
/// Each gateway replica counts on its own; the throttling that must hold across replicas (failed logins per userId
/// and address) is Identity's, in its database. The table is bounded: past `maximumKeys`, buckets that have refilled
/// completely are forgotten (they carry no state), and if that frees nothing the table starts over.
struct RateLimiter {
    struct Rule: Sendable, Equatable {
        var name: String
        /// Requests allowed in a burst, and per minute on average.
        var perMinute: Int

        var refillPerSecond: Double { Double(perMinute) / 60 }
    }

    enum Decision: Equatable {
        case allowed
        /// Refused; a token is back after this many whole seconds.
        case limited(retryAfter: Int)
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
        let capacity: Double
        let refillPerSecond: Double

        /// The tokens it holds at `now`.
        func tokens(at now: ContinuousClock.Instant) -> Double {
            let seconds = (now - updated) / .seconds(1)
            return min(capacity, tokens + max(0, seconds) * refillPerSecond)
        }
    }

    private var buckets: [String: Bucket] = [:]
    let maximumKeys: Int

    init(maximumKeys: Int = 100_000) {
        self.maximumKeys = maximumKeys
    }

    var count: Int { buckets.count }

    mutating func take(_ address: String, rule: Rule, now: ContinuousClock.Instant) -> Decision {
        guard rule.perMinute > 0 else { return .allowed }
        let key = rule.name + " " + address
        let capacity = Double(rule.perMinute)
        var bucket = buckets[key] ?? Bucket(tokens: capacity, updated: now, capacity: capacity, refillPerSecond: rule.refillPerSecond)
        bucket.tokens = bucket.tokens(at: now)
        bucket.updated = now
        let decision: Decision
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            decision = .allowed
        } else {
            decision = .limited(retryAfter: max(1, Int(((1 - bucket.tokens) / rule.refillPerSecond).rounded(.up))))
        }
        if buckets[key] == nil, buckets.count >= maximumKeys {
            forgetIdle(now: now)
        }
        buckets[key] = bucket
        return decision
    }

    /// What ``take(_:rule:now:)`` would decide, without taking.
    func peek(_ address: String, rule: Rule, now: ContinuousClock.Instant) -> Decision {
        guard rule.perMinute > 0, let bucket = buckets[rule.name + " " + address] else { return .allowed }
        let tokens = bucket.tokens(at: now)
        return tokens >= 1 ? .allowed : .limited(retryAfter: max(1, Int(((1 - tokens) / rule.refillPerSecond).rounded(.up))))
    }

    /// Drops the buckets that are full again by now (as if never used); all of them if none is.
    private mutating func forgetIdle(now: ContinuousClock.Instant) {
        buckets = buckets.filter { _, bucket in bucket.tokens(at: now) < bucket.capacity }
        if buckets.count >= maximumKeys {
            buckets.removeAll(keepingCapacity: true)
        }
    }
}
