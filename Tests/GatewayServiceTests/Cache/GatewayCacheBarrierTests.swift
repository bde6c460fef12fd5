import Foundation
import GatewayService
import KontoContracts
import KontoModel
import KontoTesting
import KontoWire
import NIOHTTP1
import Testing

/// A change that ends sessions is answered only once every gateway's cache has dropped the account
/// (`notifications.tailBarrier`): two gateways in front of the same services, and the barrier's bounds when a reader is
/// stuck or Notifications is unreachable.
@Suite("Gateway cache barrier", .timeLimit(.minutes(3)))
struct GatewayCacheBarrierTests {
    typealias Harness = GatewayHarness

    static let complete = #"konto_gateway_cache_barriers_total{outcome="complete"}"#
    static let timeout = #"konto_gateway_cache_barriers_total{outcome="timeout"}"#
    static let failed = #"konto_gateway_cache_barriers_total{outcome="failed"}"#

    /// A second gateway in front of the first one's services.
    static func withSecondGateway<Result: Sendable>(_ first: Harness.Running, _ body: @escaping @Sendable (Harness.Running) async throws -> Result) async throws -> Result {
        var configuration = GatewayConfiguration(
            port: 0,
            secret: WireSecret(Harness.secret),
            identity: .init(host: "127.0.0.1", port: try #require(first.identityPort)),
            profile: .init(host: "127.0.0.1", port: try #require(first.profilePort)),
            notifications: .init(host: "127.0.0.1", port: try #require(first.notificationsPort))
        )
        configuration.upstreamTimeout = .seconds(15)
        return try await Harness.withGateway(configuration, body)
    }

    @Test("a logout, a password change and a deletion through one gateway are refused by the other, whose cache held the session, on the very next request, round after round")
    func otherGatewayRefusesAtOnce() async throws {
        try await Harness.withGateway { a in
            try await Self.withSecondGateway(a) { b in
                try await GatewayCacheTests.waitUntilLive(a)
                try await GatewayCacheTests.waitUntilLive(b)
                for round in 0..<5 {
                    // Logout.
                    let (token, _) = try await a.signUp("logout-\(round)@example.org")
                    try await GatewayCacheTests.warm(b, tokens: [token])
                    #expect(try await a.request(.DELETE, "/v1/sessions/current", token: token).status == 204)
                    #expect(try await b.request(.GET, "/v1/account", token: token).status == 401, "round \(round): logout")

                    // Password change: the other session ends.
                    let (owner, _) = try await a.signUp("change-\(round)@example.org")
                    let other = try #require(try await b.request(.POST, "/v1/sessions", json: #"{"userId":"change-\#(round)@example.org","password":"correct horse battery"}"#).object["session"] as? [String: Any])["token"] as? String
                    let otherToken = try #require(other)
                    try await GatewayCacheTests.warm(b, tokens: [otherToken])
                    let changed = try await a.request(.PUT, "/v1/account/password", json: #"{"currentPassword":"correct horse battery","newPassword":"a new horse battery"}"#, token: owner)
                    #expect(changed.status == 200)
                    #expect(try await b.request(.GET, "/v1/account", token: otherToken).status == 401, "round \(round): password change")

                    // Deletion.
                    let (doomed, _) = try await a.signUp("deleted-\(round)@example.org")
                    try await GatewayCacheTests.warm(b, tokens: [doomed])
                    #expect(try await a.request(.DELETE, "/v1/account", json: #"{"currentPassword":"correct horse battery"}"#, token: doomed).status == 204)
                    #expect(try await b.request(.GET, "/v1/account", token: doomed).status == 401, "round \(round): deletion")
                }
                #expect(try await a.metric(Self.complete) == 15)
                #expect(try await a.metric(Self.timeout) == nil)
            }
        }
    }

    @Test("a reader that does not acknowledge holds a change back only until the gateway's bound; the change is made and answered")
    func stuckReaderBounded() async throws {
        try await Harness.withGateway(configure: { $0.cacheBarrierTimeout = .milliseconds(300) }) { gateway in
            try await GatewayCacheTests.waitUntilLive(gateway)
            // Signed up before the stuck reader registers, so that the sign-up's events come before its cursor: each
            // event a cache-holding reader is sent must be acknowledged within 2 s or its tail is ended, and on a loaded
            // machine (the whole suite beside it) this test's reading task was once too slow for that, leaving no
            // reader for the logout's barrier to wait for.
            let (token, _) = try await gateway.signUp("stuck@example.org")
            try await gateway.withService(port: gateway.notificationsPort, server: NotificationsContract.serviceName) { notifications in
                // Another gateway's cache, stuck on the logout: it acknowledges every other event (so the reader is
                // never ended for being slow before the logout), never the logout's.
                let cursor = try await notifications.call(NotificationsContract.tailCursor, NotificationsTailCursorRequest(holdsCache: true))
                let stuck = try await notifications.subscribe(
                    NotificationsContract.tail, NotificationsTailRequest(after: cursor.cursor, readerId: cursor.readerId), credit: 64
                )
                let reading = Task {
                    for try await delivery in stuck {
                        if case .disassociatingAccount = delivery.event.kind { continue }
                        stuck.acknowledge(delivery)
                    }
                }
                defer { reading.cancel(); stuck.cancel() }
                let start = ContinuousClock.now
                #expect(try await gateway.request(.DELETE, "/v1/sessions/current", token: token).status == 204)
                #expect(ContinuousClock.now - start < .seconds(2), "the logout waited \(ContinuousClock.now - start)")
                #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 401)
                #expect(try await gateway.metric(Self.timeout) == 1)
            }
        }
    }

    @Test("with Notifications unreachable a change is answered at once and counted as failed; with the barrier off, not waited for")
    func unreachableOrOff() async throws {
        let unreachable = try FreePort.loopback()
        try await Harness.withGateway(configure: { $0.notifications = .init(host: "127.0.0.1", port: unreachable) }) { gateway in
            let (token, _) = try await gateway.signUp("alone@example.org")
            #expect(try await gateway.request(.DELETE, "/v1/sessions/current", token: token).status == 204)
            #expect(try await gateway.request(.GET, "/v1/account", token: token).status == 401)
            #expect(try await gateway.metric(Self.failed) == 1)
        }
        try await Harness.withGateway(configure: { $0.cacheBarrierTimeout = .zero }) { gateway in
            let (token, _) = try await gateway.signUp("unbarred@example.org")
            #expect(try await gateway.request(.DELETE, "/v1/sessions/current", token: token).status == 204)
            for series in [Self.complete, Self.timeout, Self.failed] {
                #expect(try await gateway.metric(series) == nil)
            }
        }
    }
}
