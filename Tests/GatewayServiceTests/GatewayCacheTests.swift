import Foundation
import GatewayService
import NIOHTTP1
import KontoContracts
import KontoModel
import KontoTesting
import KontoWire
import Testing

/// The gateway's session and details cache with the real services on PostgreSQL: what changes through the gateway
/// is seen on the very next request; what changes behind its back arrives with its account event; and while the
/// events cannot be followed the cache is off.
@Suite("Gateway cache", .timeLimit(.minutes(3)))
struct GatewayCacheTests {
    typealias Harness = GatewayHarness

    static let hits = #"konto_gateway_cache_lookups_total{cache="session",outcome="hit"}"#
    static let accountHits = #"konto_gateway_cache_lookups_total{cache="account",outcome="hit"}"#

    /// Waits (bounded) until `condition` holds for the answer to `GET /v1/account`.
    static func eventually(_ gateway: Harness.Running, token: String, within limit: Duration = .seconds(15), _ condition: (Harness.HTTPAnswer) -> Bool) async throws -> Harness.HTTPAnswer {
        let deadline = ContinuousClock.now + limit
        while true {
            let answer = try await gateway.request(.GET, "/v1/account", token: token)
            if condition(answer) || ContinuousClock.now > deadline { return answer }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func waitUntilLive(_ gateway: Harness.Running) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while try await gateway.metric("konto_gateway_cache_live") != 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await gateway.metric("konto_gateway_cache_live") == 1)
    }

    /// Reads with each token until the cache has served `series` at least `count` more times (the account's own
    /// sign-up and login events drop early entries, so the first reads may miss). Bounded.
    static func warm(_ gateway: Harness.Running, tokens: [String], series: String = hits, count: Double = 2) async throws {
        let target = (try await gateway.metric(series) ?? 0) + count
        let deadline = ContinuousClock.now + .seconds(15)
        while try await gateway.metric(series) ?? 0 < target, ContinuousClock.now < deadline {
            for token in tokens {
                #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 200)
            }
        }
        #expect(try await gateway.metric(series) ?? 0 >= target)
    }

    static func givenName(_ answer: Harness.HTTPAnswer) -> String? {
        ((answer.object["details"] as? [String: Any])?["name"] as? [String: Any])?["givenName"] as? String
    }

    @Test("through the gateway, a logout, a details change and a password change are seen on the very next request")
    func changesThroughTheGateway() async throws {
        try await Harness.withGateway { gateway in
            try await Self.waitUntilLive(gateway)
            let (token, _) = try await gateway.signUp("ada@example.org", details: #"{"name":{"givenName":"Ada"}}"#)
            let login = try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"ada@example.org","password":"correct horse battery"}"#)
            let second = try #require((login.object["session"] as? [String: Any])?["token"] as? String)
            try await Self.warm(gateway, tokens: [token, second])
            try await Self.warm(gateway, tokens: [token, second], series: Self.accountHits)
            // A details change: the next read has it (and the new ETag).
            let patched = try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"name":{"givenName":"Augusta"}}}"#, token: token)
            #expect(patched.status == 200)
            let read = try await gateway.request(.GET, "/v1/account", token: second)
            #expect(Self.givenName(read) == "Augusta")
            #expect(read.headers.first(name: "ETag") == patched.headers.first(name: "ETag"))
            // A logout: that token at once (cached just before), the other session still served.
            try await Self.warm(gateway, tokens: [token, second])
            #expect(try await gateway.request(.DELETE, "/v1/sessions/current", token: token).status == 204)
            #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 401)
            #expect(try await gateway.request(.GET, "/v1/account", token: second).status == 200)
            // A password change ends the other sessions: a third one, cached, is refused at once.
            let third = try #require((try await gateway.request(.POST, "/v1/sessions", json: #"{"userId":"ada@example.org","password":"correct horse battery"}"#)
                .object["session"] as? [String: Any])?["token"] as? String)
            try await Self.warm(gateway, tokens: [third])
            let changed = try await gateway.request(.PUT, "/v1/account/password", json: #"{"newPassword":"a new horse battery"}"#, token: second)
            #expect(changed.status == 200)
            #expect(try await gateway.request(.GET, "/v1/account", token: third).status == 401)
            // Deleting the account: its session is refused at once.
            let (doomed, _) = try await gateway.signUp("grace@example.org")
            try await Self.warm(gateway, tokens: [doomed])
            #expect(try await gateway.request(.DELETE, "/v1/account", token: doomed).status == 204)
            #expect(try await gateway.request(.GET, "/v1/account", token: doomed).status == 401)
        }
    }

    /// Reads until one answer came from the generated handler (the cache missed) and one from the cache; both.
    static func missAndHit(_ gateway: Harness.Running, token: String) async throws -> (miss: Harness.HTTPAnswer?, hit: Harness.HTTPAnswer?) {
        var miss: Harness.HTTPAnswer?
        var hit: Harness.HTTPAnswer?
        let deadline = ContinuousClock.now + .seconds(15)
        while miss == nil || hit == nil, ContinuousClock.now < deadline {
            let before = try await gateway.metric(Self.accountHits) ?? 0
            let answer = try await gateway.request(.GET, "/v1/account", token: token)
            if try await gateway.metric(Self.accountHits) ?? 0 > before { hit = answer } else { miss = answer }
        }
        return (miss, hit)
    }

    @Test("an answer from the cache is byte for byte the generated handler's: status, content type, ETag, body")
    func cachedAnswerIsTheHandlers() async throws {
        try await Harness.withGateway { gateway in
            try await Self.waitUntilLive(gateway)
            let details = #"{"name":{"givenName":"Zoë \"Z\" ß/ü","familyName":"Ærø 😀 עברית"},"dateOfBirth":"1990-02-28","genderIdentity":"nonBinary","phoneNumbers":["+41 44 555 12 12","<script>alert(1)</script>"]}"#
            let (token, _) = try await gateway.signUp("zoe@example.org", details: details)
            let patched = try await gateway.request(.PATCH, "/v1/account", json: #"{"set":{"name":{"givenName":"Zoë – ~ «\u00e9»"}}}"#, token: token)
            #expect(patched.status == 200, "\(patched.text)")
            let (miss, hit) = try await Self.missAndHit(gateway, token: token)
            let handler = try #require(miss)
            let cached = try #require(hit)
            #expect(handler.status == 200)
            #expect(cached.status == handler.status)
            #expect(cached.contentType == handler.contentType)
            #expect(handler.headers.first(name: "ETag") == #""2""#)
            #expect(cached.headers.first(name: "ETag") == handler.headers.first(name: "ETag"))
            #expect(cached.headers.first(name: "X-Request-ID") != nil)
            #expect(cached.body == handler.body, "\(cached.text) vs \(handler.text)")
        }
    }

    @Test("changes behind the gateway's back (straight at Identity and Profile) reach it with their account events")
    func changesBehindItsBack() async throws {
        try await Harness.withGateway { gateway in
            try await Self.waitUntilLive(gateway)
            let (token, accountId) = try await gateway.signUp("ada@example.org", details: #"{"name":{"givenName":"Ada"}}"#)
            try await Self.warm(gateway, tokens: [token])
            try await Self.warm(gateway, tokens: [token], series: Self.accountHits)
            // Profile changed directly: detailsChanged invalidates the gateway's copy.
            try await gateway.withService(port: gateway.profilePort, server: ProfileContract.serviceName) { profile in
                var details = AccountDetails()
                details[\.name] = PersonName(givenName: "Augusta")
                _ = try await profile.call(ProfileContract.modify, ProfileModifyRequest(accountId: accountId, modifications: AccountModifications(set: details)))
            }
            let changed = try await Self.eventually(gateway, token: token) { Self.givenName($0) == "Augusta" }
            #expect(Self.givenName(changed) == "Augusta")
            // Sessions ended directly at Identity: sessionsRevoked invalidates the cached check.
            try await gateway.withService(port: gateway.identityPort, server: IdentityContract.serviceName) { identity in
                _ = try await identity.call(IdentityContract.logoutEverywhere, IdentitySessionRequest(token: BearerToken(token)))
            }
            let refused = try await Self.eventually(gateway, token: token) { $0.status == 401 }
            #expect(refused.status == 401)
        }
    }

    @Test("while Notifications cannot be followed the cache is off: a logout behind the gateway's back is refused at once")
    func offWithoutEvents() async throws {
        let unreachable = try FreePort.loopback()
        try await Harness.withGateway(configure: { $0.notifications = .init(host: "127.0.0.1", port: unreachable) }) { gateway in
            let (token, _) = try await gateway.signUp("ada@example.org")
            for _ in 0..<3 {
                #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 200)
            }
            #expect(try await gateway.metric("konto_gateway_cache_live") == 0)
            #expect(try await gateway.metric(Self.hits) ?? 0 == 0)
            try await gateway.withService(port: gateway.identityPort, server: IdentityContract.serviceName) { identity in
                _ = try await identity.call(IdentityContract.logoutEverywhere, IdentitySessionRequest(token: BearerToken(token)))
            }
            #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 401)
        }
    }
}
