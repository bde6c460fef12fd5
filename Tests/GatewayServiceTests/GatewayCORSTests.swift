import Foundation
import GatewayService
import KontoTesting
import NIOHTTP1
import Testing

/// CORS for the configured browser origins only.
@Suite("Gateway CORS")
struct GatewayCORSTests {
    @Test("a listed origin gets CORS headers (preflight and answers, problems too); another origin none")
    func cors() async throws {
        try await GatewayHarness.withGateway(configure: { $0.corsOrigins = ["https://app.example.org"] }) { gateway in
            let preflight = try await gateway.request(.OPTIONS, "/v1/account", headers: [
                ("Origin", "https://app.example.org"), ("Access-Control-Request-Method", "PATCH"),
            ])
            #expect(preflight.status == 204)
            #expect(preflight.headers.first(name: "Access-Control-Allow-Origin") == "https://app.example.org")
            #expect(preflight.headers.first(name: "Access-Control-Allow-Methods")?.contains("PATCH") == true)
            #expect(preflight.headers.first(name: "Access-Control-Allow-Headers")?.lowercased().contains("authorization") == true)

            let problem = try await gateway.request(.GET, "/v1/account", headers: [("Origin", "https://app.example.org")])
            #expect(problem.status == 401)
            #expect(problem.headers.first(name: "Access-Control-Allow-Origin") == "https://app.example.org")
            #expect(problem.headers.first(name: "Access-Control-Expose-Headers")?.contains("X-Request-ID") == true)

            let foreign = try await gateway.request(.GET, "/v1/schema", headers: [("Origin", "https://evil.example.com")])
            #expect(foreign.status == 200)
            #expect(foreign.headers.first(name: "Access-Control-Allow-Origin") == nil)
        }
    }
}
