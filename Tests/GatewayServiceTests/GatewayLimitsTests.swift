import Foundation
@testable import GatewayService
import KontoRuntime
import KontoTesting
import KontoWire
import NIOHTTP1
import Testing

/// Rate limits and metrics through a running gateway.
@Suite("Gateway limits and metrics", .serialized)
struct GatewayLimitsTests {
    @Test("behind a trusted proxy each client address has its own limit; a refusal is 429 with Retry-After")
    func rateLimited() async throws {
        try await GatewayHarness.withGateway(configure: { configuration in
            configuration.clientAddressHeader = "X-Forwarded-For"
            configuration.trustedProxies = Self.loopback
            configuration.credentialsRateLimitPerMinute = 2
        }) { gateway in
            let body = #"{"userId":"nobody@example.org","password":"whatever it is"}"#
            for _ in 0..<2 {
                let answer = try await gateway.request(.POST, "/v1/sessions", json: body, headers: [("X-Forwarded-For", "198.51.100.7, 203.0.113.1")])
                #expect(answer.status == 401)
            }
            let limited = try await gateway.request(.POST, "/v1/sessions", json: body, headers: [("X-Forwarded-For", "198.51.100.7, 203.0.113.1")])
            #expect(limited.status == 429)
            #expect(limited.code == "request.rateLimited")
            #expect(Int(limited.headers.first(name: "Retry-After") ?? "") ?? 0 >= 1)
            // The last entry is the address the proxy saw: another one is not limited.
            let other = try await gateway.request(.POST, "/v1/sessions", json: body, headers: [("X-Forwarded-For", "203.0.113.1, 198.51.100.8")])
            #expect(other.status == 401)
            #expect(try await gateway.request(.GET, "/health/live", headers: [("X-Forwarded-For", "203.0.113.1")]).status == 200)
        }
    }

    static let loopback = try! TrustedProxies(parsing: "127.0.0.1, ::1")

    @Test("the client address is the right-most entry that is not a trusted proxy; prepended entries change nothing; IPv6 counts by /64")
    func trustedProxies() async throws {
        try await GatewayHarness.withGateway(configure: { configuration in
            configuration.clientAddressHeader = "X-Forwarded-For"
            configuration.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1, ::1, 10.0.0.0/8")
            configuration.credentialsRateLimitPerMinute = 2
        }) { gateway in
            // Each attempt for another userId: Identity's own count per userId is not what is tested here.
            let login = { @Sendable (forwarded: String) async throws -> Int in
                let body = #"{"userId":"nobody-\#(UUID().uuidString)@example.org","password":"whatever it is"}"#
                return try await gateway.request(.POST, "/v1/sessions", json: body, headers: [("X-Forwarded-For", forwarded)]).status
            }
            // Through an inner proxy (10.1.2.3, trusted): the client is the entry before it.
            let first = try await login("198.51.100.7, 10.1.2.3")
            #expect(first == 401)
            #expect(try await login("198.51.100.7, 10.9.9.9") == 401)
            #expect(try await login("198.51.100.7, 10.1.2.3") == 429, "the same client through another proxy")
            // Entries the client writes itself, to the left, do not make it someone else.
            #expect(try await login("192.0.2.99, 198.51.100.7") == 429)
            #expect(try await login("198.51.100.8") == 401)
            // IPv6: one /64 is one client.
            #expect(try await login("2001:db8:1:2::1") == 401)
            #expect(try await login("[2001:db8:1:2::beef]:4711") == 401)
            #expect(try await login("2001:db8:1:2:ffff::9") == 429)
            #expect(try await login("2001:db8:1:3::1") == 401)
        }
    }

    @Test("without trusted proxies the client-address header and X-Forwarded-Proto are anyone's words and ignored")
    func untrustedHeader() async throws {
        try await GatewayHarness.withGateway(configure: { configuration in
            configuration.clientAddressHeader = "X-Forwarded-For"
            configuration.trustedProxies = try! TrustedProxies(parsing: "192.0.2.1")
            configuration.credentialsRateLimitPerMinute = 2
        }) { gateway in
            let body = #"{"userId":"nobody@example.org","password":"whatever it is"}"#
            var statuses: [Int] = []
            for address in ["198.51.100.1", "198.51.100.2", "198.51.100.3"] {
                statuses.append(try await gateway.request(.POST, "/v1/sessions", json: body, headers: [("X-Forwarded-For", address)]).status)
            }
            #expect(statuses == [401, 401, 429], "every request is the peer's (loopback), whatever the header says")
            let page = try await gateway.request(.GET, "/account/", headers: [("X-Forwarded-Proto", "https")])
            #expect(page.headers["Set-Cookie"].allSatisfy { !$0.contains("Secure") }, "\(page.headers)")
        }
    }

    @Test("the gateway can hold its own wire key instead of the root secret; a malformed key, or both, is refused naming the variable")
    func ownWireKey() throws {
        let logger = GatewayHarness.logger
        let root = "a-root-secret-of-thirty-two-bytes-0123456789"
        let key = WireSecret(root).peerKeyHex(for: "gateway")
        // What docs/CONFIGURATION.md and the error message tell an operator to run, run once with openssl for this root:
        // printf 'konto.wire.peer.v1:gateway' | openssl dgst -sha256 -hmac "$root"
        #expect(key == "471ba449ca98d92ff814432685fc0dfca0f1deaf7937b0b8911acf1e4af343f0")
        let configured = try GatewayConfiguration(environment: ServiceEnvironment(["KONTO_GATEWAY_WIRE_KEY": key.uppercased()]), logger: logger)
        #expect(configured.secret.peer == "gateway")
        let transcript = WireHandshake.Transcript(serverNonce: [1], serverVersions: [2], serviceName: "gateway", clientVersions: [2], clientNonce: [2])
        #expect(
            WireHandshake.clientProof(key: configured.secret.proofKey(caller: "gateway", server: "identity"), transcript: transcript)
                == WireHandshake.clientProof(key: WireSecret(root).proofKey(caller: "gateway", server: "identity"), transcript: transcript)
        )
        func error(_ settings: [String: String]) -> String? {
            do {
                _ = try GatewayConfiguration(environment: ServiceEnvironment(settings), logger: logger)
                return nil
            } catch {
                return "\(error)"
            }
        }
        for bad in ["abc", String(repeating: "g", count: 64), String(key.dropLast(2))] {
            #expect(error(["KONTO_GATEWAY_WIRE_KEY": bad])?.contains("KONTO_GATEWAY_WIRE_KEY must be 64 hexadecimal digits") == true, "\(bad)")
        }
        #expect(error(["KONTO_GATEWAY_WIRE_KEY": key, "KONTO_WIRE_SECRET": root])?.contains("KONTO_GATEWAY_WIRE_KEY is set together with KONTO_WIRE_SECRET") == true)
        // With neither, the message names the gateway's own key first (what a deployment gives it), and the
        // development secret as the alternative.
        let neither = error([:]) ?? ""
        #expect(neither.contains("KONTO_GATEWAY_WIRE_KEY is required") && neither.contains("konto keys") && neither.contains("KONTO_WIRE_SECRET alone for development"), "\(neither)")
    }

    @Test("the proxy settings are checked at start: a header without trusted proxies, a malformed range")
    func proxySettings() throws {
        let logger = GatewayHarness.logger
        let base = ["KONTO_WIRE_SECRET": "a-secret-of-sixteen-bytes-or-more"]
        func error(_ settings: [String: String]) -> String? {
            do {
                _ = try GatewayConfiguration(environment: ServiceEnvironment(base.merging(settings) { $1 }), logger: logger)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(error(["KONTO_GATEWAY_CLIENT_ADDRESS_HEADER": "X-Forwarded-For"])?.contains("KONTO_GATEWAY_TRUSTED_PROXIES") == true)
        #expect(error(["KONTO_GATEWAY_TRUSTED_PROXIES": "10.0.0.0/33"])?.contains("10.0.0.0/33") == true)
        #expect(error(["KONTO_GATEWAY_TRUSTED_PROXIES": "10.0.0.0/8, proxy.internal"])?.contains("proxy.internal") == true)
        #expect(error(["KONTO_GATEWAY_CLIENT_ADDRESS_HEADER": "X-Forwarded-For", "KONTO_GATEWAY_TRUSTED_PROXIES": "10.0.0.0/8, fd00::/8"]) == nil)
        let parsed = try TrustedProxies(parsing: "10.0.0.0/8, 192.0.2.7, fd00::/8")
        #expect(parsed.trusts("10.200.1.1") && parsed.trusts("192.0.2.7") && parsed.trusts("fd12::1"))
        #expect(!parsed.trusts("192.0.2.8") && !parsed.trusts("11.0.0.1") && !parsed.trusts("fe80::1") && !parsed.trusts("not an address"))
        #expect(TrustedProxies.throttlingKey("2001:db8:1:2:3:4:5:6") == "2001:db8:1:2::/64")
        #expect(TrustedProxies.throttlingKey("::ffff:192.0.2.1") == "192.0.2.1")
        #expect(TrustedProxies.throttlingKey("192.0.2.1") == "192.0.2.1")
    }

    @Test("/metrics counts requests by route and status (the console's pages by theirs, unknown paths as unmatched), and the services' calls")
    func metrics() async throws {
        try await GatewayHarness.withGateway { gateway in
            _ = try await gateway.signUp("mary@example.org")
            _ = try await gateway.request(.GET, "/v1/account", token: "not-a-token")
            _ = try await gateway.request(.GET, "/no/such/route")
            // The console's pages and the gateway's own routes are counted by the route they matched.
            _ = try await gateway.request(.GET, "/account/login")
            _ = try await gateway.request(.GET, "/account/oidc/some-provider")
            #expect(try await gateway.request(.GET, "/problems/account.throttled").status == 200)
            #expect(try await gateway.request(.GET, "/account/no/such/page").status == 404)
            let answer = try await gateway.request(.GET, "/metrics")
            #expect(answer.status == 200)
            #expect(answer.contentType?.hasPrefix("text/plain") == true)
            let text = answer.text
            #expect(text.contains(#"konto_gateway_requests_total{route="/v1/accounts",method="POST",status="201"} 1"#))
            #expect(text.contains(#"konto_gateway_requests_total{route="/v1/account",method="GET",status="401"} 1"#))
            #expect(text.contains(#"konto_gateway_requests_total{route="/account/login",method="GET""#))
            #expect(text.contains(#"konto_gateway_requests_total{route="/account/oidc/{provider}",method="GET""#))
            #expect(text.contains(#"konto_gateway_requests_total{route="/problems/{code}",method="GET",status="200"} 1"#))
            #expect(text.contains(#"konto_gateway_requests_total{route="unmatched",method="GET",status="404"} 2"#))
            #expect(!text.contains("/no/such/route") && !text.contains("some-provider") && !text.contains("no/such/page"))
            #expect(text.contains(#"konto_gateway_upstream_duration_seconds_count{service="identity",method="identity.signUp"} 1"#))
            #expect(text.contains(#"konto_gateway_upstream_errors_total{service="identity",method="identity.validateSession",code="account.unauthenticated"} 1"#))
        }
    }
}
