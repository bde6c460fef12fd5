import Foundation
import NIOHTTP1
import Testing
import Yams

/// The document is the truth: the served `/openapi.json` is openapi.yaml (from which the routes are generated).
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    static let source = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Services/Gateway/GatewayService/openapi.yaml")

    @Test("the embedded copy is openapi.yaml (else run scripts/embed-openapi.sh)")
    func embeddedCopyIsCurrent() throws {
        let file = try String(contentsOf: Self.source, encoding: .utf8)
        let embedded = URL(fileURLWithPath: Self.source.path.replacingOccurrences(of: "openapi.yaml", with: "OpenAPI/OpenAPIDocument+Source.swift"))
        let swift = try String(contentsOf: embedded, encoding: .utf8)
        let start = try #require(swift.range(of: "#\"\"\"\n"))
        let end = try #require(swift.range(of: "\"\"\"#", options: .backwards))
        #expect(String(swift[start.upperBound..<end.lowerBound]) == file, "run scripts/embed-openapi.sh")
    }

    @Test("GET /openapi.json serves openapi.yaml as JSON, OpenAPI 3.1, every route of the HTTP API")
    func served() async throws {
        let yaml = try String(contentsOf: Self.source, encoding: .utf8)
        try await GatewayHarness.withGateway { gateway in
            let answer = try await gateway.request(.GET, "/openapi.json")
            #expect(answer.status == 200)
            #expect(answer.contentType == "application/json")
            let served = answer.object
            let expected = try #require(try Yams.load(yaml: yaml) as? [String: Any])
            #expect(NSDictionary(dictionary: served) == NSDictionary(dictionary: expected))
            #expect(served["openapi"] as? String == "3.1.0")
            let paths = Set((served["paths"] as? [String: Any] ?? [:]).keys)
            #expect(paths.isSuperset(of: [
                "/v1/accounts", "/v1/sessions", "/v1/sessions/anonymous", "/v1/sessions/current", "/v1/account",
                "/v1/account/password", "/v1/account/user-id", "/v1/account/reauthenticate", "/v1/password-resets",
                "/v1/password-resets/confirm", "/v1/schema", "/health/live", "/health/ready",
            ]))
        }
    }
}
