import Foundation
import GatewayService
import KontoTesting
import NIOHTTP1
import Testing

/// Rate limits and metrics through a running gateway.
@Suite("Gateway limits and metrics", .serialized)
struct GatewayLimitsTests {
    @Test("behind a trusted proxy each client address has its own limit; a refusal is 429 with Retry-After")
    func rateLimited() async throws {
        try await GatewayHarness.withGateway(configure: { configuration in
            configuration.clientAddressHeader = "X-Forwarded-For"
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

    @Test("/metrics counts requests by route and status, and the services' calls")
    func metrics() async throws {
        try await GatewayHarness.withGateway { gateway in
            _ = try await gateway.signUp("mary@example.org")
            _ = try await gateway.request(.GET, "/v1/account", token: "not-a-token")
            _ = try await gateway.request(.GET, "/no/such/route")
            let answer = try await gateway.request(.GET, "/metrics")
            #expect(answer.status == 200)
            #expect(answer.contentType?.hasPrefix("text/plain") == true)
            let text = answer.text
            #expect(text.contains(#"konto_gateway_requests_total{route="/v1/accounts",method="POST",status="201"} 1"#))
            #expect(text.contains(#"konto_gateway_requests_total{route="/v1/account",method="GET",status="401"} 1"#))
            #expect(text.contains(#"route="unmatched""#))
            #expect(!text.contains("/no/such/route"))
            #expect(text.contains(#"konto_gateway_upstream_duration_seconds_count{service="identity",method="identity.signUp"} 1"#))
            #expect(text.contains(#"konto_gateway_upstream_errors_total{service="identity",method="identity.validateSession",code="account.unauthenticated"} 1"#))
        }
    }
}
