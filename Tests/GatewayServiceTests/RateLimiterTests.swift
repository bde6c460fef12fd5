@testable import GatewayService
import HTTPTypes
import Testing

/// The token buckets alone, driven by a made-up clock.
@Suite("Rate limiter")
struct RateLimiterTests {
    let start = ContinuousClock.now
    let rule = RateLimiter.Rule(name: "test", perMinute: 3)

    @Test("a burst of the rule's size passes, the next is refused with the seconds until a token is back")
    func burst() {
        var limiter = RateLimiter()
        for _ in 0..<3 {
            #expect(limiter.take("10.0.0.1", rule: rule, now: start) == .allowed)
        }
        #expect(limiter.take("10.0.0.1", rule: rule, now: start) == .limited(retryAfter: 20))
        // Another address has its own bucket; another rule too.
        #expect(limiter.take("10.0.0.2", rule: rule, now: start) == .allowed)
        #expect(limiter.take("10.0.0.1", rule: RateLimiter.Rule(name: "other", perMinute: 3), now: start) == .allowed)
    }

    @Test("peeking decides as taking would, and takes nothing")
    func peek() {
        var limiter = RateLimiter()
        #expect(limiter.peek("a", rule: rule, now: start) == .allowed, "an address never seen")
        for _ in 0..<2 { _ = limiter.take("a", rule: rule, now: start) }
        for _ in 0..<5 { #expect(limiter.peek("a", rule: rule, now: start) == .allowed) }
        _ = limiter.take("a", rule: rule, now: start)
        #expect(limiter.peek("a", rule: rule, now: start) == .limited(retryAfter: 20))
        #expect(limiter.peek("a", rule: rule, now: start + .seconds(20)) == .allowed)
        #expect(limiter.take("a", rule: rule, now: start + .seconds(20)) == .allowed)
    }

    @Test("tokens come back at the rule's rate, never beyond its size")
    func refill() {
        var limiter = RateLimiter()
        for _ in 0..<3 { _ = limiter.take("a", rule: rule, now: start) }
        #expect(limiter.take("a", rule: rule, now: start + .seconds(19)) == .limited(retryAfter: 1))
        #expect(limiter.take("a", rule: rule, now: start + .seconds(40)) == .allowed)
        // An hour idle refills to three, not sixty.
        let later = start + .seconds(3_600)
        for _ in 0..<3 {
            #expect(limiter.take("a", rule: rule, now: later) == .allowed)
        }
        #expect(limiter.take("a", rule: rule, now: later) != .allowed)
    }

    @Test("a rule of 0 per minute is no limit")
    func off() {
        var limiter = RateLimiter()
        for _ in 0..<1_000 {
            #expect(limiter.take("a", rule: RateLimiter.Rule(name: "off", perMinute: 0), now: start) == .allowed)
        }
        #expect(limiter.count == 0)
    }

    @Test("the table stays bounded: full buckets are forgotten first, a limited one is kept")
    func forgetsFullBuckets() {
        var limiter = RateLimiter(maximumKeys: 4)
        for key in ["a", "b", "c"] { _ = limiter.take(key, rule: rule, now: start) }
        for _ in 0..<3 { _ = limiter.take("hot", rule: rule, now: start + .seconds(30)) }
        #expect(limiter.count == 4)
        // a, b and c are full again 20 s after their one request; hot is not.
        #expect(limiter.take("new", rule: rule, now: start + .seconds(31)) == .allowed)
        #expect(limiter.count == 2)
        #expect(limiter.take("hot", rule: rule, now: start + .seconds(31)) != .allowed)
    }

    @Test("when no bucket is full, the table starts over rather than grow")
    func startsOver() {
        var limiter = RateLimiter(maximumKeys: 4)
        for key in ["a", "b", "c", "d"] { _ = limiter.take(key, rule: rule, now: start) }
        _ = limiter.take("e", rule: rule, now: start + .seconds(1))
        #expect(limiter.count == 1)
    }

    @Test("the gateway's limits: a credential route takes from both buckets, other routes from the general one, health never")
    func gatewayRules() {
        let limits = GatewayRateLimits(generalPerMinute: 5, credentialsPerMinute: 2)
        #expect(limits.checkCredentials(address: "a", now: start) == .allowed)
        #expect(limits.checkCredentials(address: "a", now: start) == .allowed)
        #expect(limits.checkCredentials(address: "a", now: start) != .allowed)
        #expect(limits.checkCredentials(address: "b", now: start) == .allowed, "per address")
        // The general bucket is another one.
        #expect(limits.check(path: "/v1/account", address: "a", now: start) == .allowed)
        for _ in 0..<100 {
            #expect(limits.check(path: "/health/ready", address: "a", now: start) == .allowed)
        }
    }
}
