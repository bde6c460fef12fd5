import Foundation
@testable import GatewayService
import KontoContracts
import KontoModel
import Synchronization
import Testing

/// The cache's rules, without sockets: it serves only while live, never past an entry's time or its session's
/// expiry, drops an account on invalidation, and refuses to store a read that an invalidation overtook.
@Suite("Account cache")
struct AccountCacheTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(_ duration: Duration) { instant.withLock { $0 += duration } }
    }

    static func cache(_ clock: ManualClock, timeToLive: Duration = .seconds(30), capacity: Int = 100) -> AccountCache {
        AccountCache(configuration: .init(timeToLive: timeToLive, capacity: capacity), ticketLifetime: .seconds(60), now: { clock.now })
    }

    static func session(_ accountId: String, expiresIn: TimeInterval = 3_600, anonymous: Bool = false) -> IdentitySessionInfo {
        IdentitySessionInfo(account: facts(accountId, anonymous: anonymous), sessionId: "s-\(accountId)", expiresAt: Timestamp(Date().addingTimeInterval(expiresIn)), privilegedUntil: nil)
    }

    static func facts(_ accountId: String, anonymous: Bool = false) -> IdentityAccountFacts {
        IdentityAccountFacts(accountId: accountId, userId: anonymous ? nil : "\(accountId)@example.org", isAnonymous: anonymous, emailVerified: anonymous ? nil : false)
    }

    static func account(_ accountId: String, version: Int64 = 1) -> AccountCache.CachedAccount {
        try! AccountCache.CachedAccount(account: .init(accountId: accountId, version: version, isAnonymous: false, details: .init()), version: version, facts: facts(accountId))
    }

    @Test("nothing is served or stored unless the cache is live; going live or leaving empties it")
    func liveness() throws {
        let clock = ManualClock()
        let cache = Self.cache(clock)
        let token = AccountCache.TokenKey("token-1")
        #expect(cache.ticket() == nil)
        cache.setLive(true)
        let ticket = try #require(cache.ticket())
        cache.store(Self.session("a1"), for: token, ticket: ticket)
        #expect(cache.session(for: token)?.accountId == "a1")
        cache.setLive(false)
        #expect(cache.session(for: token) == nil)
        #expect(cache.ticket() == nil)
        // A read begun before the cache went live again cannot store: it may predate the tail.
        cache.setLive(true)
        cache.store(Self.session("a1"), for: token, ticket: ticket)
        #expect(cache.session(for: token) == nil)
        // Off (no time to live): never live.
        let off = Self.cache(clock, timeToLive: .zero)
        off.setLive(true)
        #expect(off.ticket() == nil)
    }

    @Test("entries end after their time to live, and sessions at their own expiry")
    func expiry() throws {
        let clock = ManualClock()
        let cache = Self.cache(clock)
        cache.setLive(true)
        let token = AccountCache.TokenKey("token-1")
        let expiring = AccountCache.TokenKey("token-2")
        cache.store(Self.session("a1"), for: token, ticket: try #require(cache.ticket()))
        cache.store(Self.session("a2", expiresIn: -1), for: expiring, ticket: try #require(cache.ticket()))
        cache.store(Self.account("a1"), ticket: try #require(cache.ticket()))
        #expect(cache.session(for: expiring) == nil)
        clock.advance(.seconds(29))
        #expect(cache.session(for: token) != nil)
        #expect(cache.account("a1") != nil)
        clock.advance(.seconds(2))
        #expect(cache.session(for: token) == nil)
        #expect(cache.account("a1") == nil)
    }

    @Test("an invalidation drops the account's sessions and details, and only its own")
    func invalidation() throws {
        let clock = ManualClock()
        let cache = Self.cache(clock)
        cache.setLive(true)
        let (first, second, other) = (AccountCache.TokenKey("t1"), AccountCache.TokenKey("t2"), AccountCache.TokenKey("t3"))
        cache.store(Self.session("a1"), for: first, ticket: try #require(cache.ticket()))
        cache.store(Self.session("a1"), for: second, ticket: try #require(cache.ticket()))
        cache.store(Self.session("b1"), for: other, ticket: try #require(cache.ticket()))
        cache.store(Self.account("a1"), ticket: try #require(cache.ticket()))
        cache.invalidate(accountId: "a1")
        #expect(cache.session(for: first) == nil)
        #expect(cache.session(for: second) == nil)
        #expect(cache.account("a1") == nil)
        #expect(cache.session(for: other)?.accountId == "b1")
        // By token: the token's account goes with it (its other sessions may have ended too).
        cache.store(Self.session("a1"), for: first, ticket: try #require(cache.ticket()))
        cache.store(Self.session("a1"), for: second, ticket: try #require(cache.ticket()))
        cache.invalidate(token: first)
        #expect(cache.session(for: second) == nil)
        #expect(cache.session(for: other) != nil)
        cache.removeAll()
        #expect(cache.session(for: other) == nil)
    }

    @Test("a read overtaken by an invalidation of its account or token is not stored; an earlier one does not matter")
    func overtakenReads() throws {
        let clock = ManualClock()
        let cache = Self.cache(clock)
        cache.setLive(true)
        let token = AccountCache.TokenKey("t1")
        // Invalidated before the read began: the read saw the change, it may be stored.
        cache.invalidate(accountId: "a1")
        let afterwards = try #require(cache.ticket())
        cache.store(Self.session("a1"), for: token, ticket: afterwards)
        #expect(cache.session(for: token) != nil)
        // A read begun, then the account's event (a logout) arrives, then the read's answer: refused.
        let racing = try #require(cache.ticket())
        cache.invalidate(accountId: "a1")
        cache.store(Self.session("a1"), for: token, ticket: racing)
        cache.store(Self.account("a1"), ticket: racing)
        #expect(cache.session(for: token) == nil)
        #expect(cache.account("a1") == nil)
        // The same by token (a logout through this gateway of a session it had not cached).
        let byToken = try #require(cache.ticket())
        cache.invalidate(token: token)
        cache.store(Self.session("a1"), for: token, ticket: byToken)
        #expect(cache.session(for: token) == nil)
        // Another account's invalidation does not block the read.
        let unrelated = try #require(cache.ticket())
        cache.invalidate(accountId: "b1")
        cache.store(Self.session("a1"), for: token, ticket: unrelated)
        #expect(cache.session(for: token) != nil)
        // A ticket older than its lifetime cannot store (invalidations that old are forgotten).
        let old = try #require(cache.ticket())
        clock.advance(.seconds(61))
        cache.store(Self.account("a1"), ticket: old)
        #expect(cache.account("a1") == nil)
    }

    @Test("the cache holds at most its capacity")
    func capacity() throws {
        let clock = ManualClock()
        let cache = Self.cache(clock, capacity: 10)
        cache.setLive(true)
        for index in 0..<50 {
            cache.store(Self.session("a\(index)"), for: AccountCache.TokenKey("t\(index)"), ticket: try #require(cache.ticket()))
            cache.store(Self.account("a\(index)"), ticket: try #require(cache.ticket()))
        }
        #expect(cache.counts.sessions == 10)
        #expect(cache.counts.accounts == 10)
        #expect(cache.session(for: AccountCache.TokenKey("t49")) != nil)
    }

    @Test("a cached account answers only a session whose account facts are those it was assembled with")
    func cachedAccountMatchesItsSession() {
        let cached = Self.account("a1")
        #expect(cached.matches(Self.session("a1")))
        // A session validated after a userId change whose event has not arrived yet names the new userId.
        var renamed = Self.session("a1")
        renamed.account.userId = "new@example.org"
        #expect(!cached.matches(renamed))
        #expect(!cached.matches(Self.session("a1", anonymous: true)))
        // Or after the address was confirmed: the cached emailVerified is stale.
        var confirmed = Self.session("a1")
        confirmed.account.emailVerified = true
        #expect(!cached.matches(confirmed))
    }
}
