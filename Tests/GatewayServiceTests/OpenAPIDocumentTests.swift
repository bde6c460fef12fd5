import Foundation
@testable import GatewayService
import NIOHTTP1
import Testing
import Yams

/// The document is the truth: the served `/openapi.json` is openapi.yaml (from which the routes are generated).
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    static let source = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Services/Gateway/GatewayService/openapi.yaml")

    @Test("the embedded document is openapi.yaml, byte for byte")
    func embeddedDocument() throws {
        #expect(OpenAPIDocument.yaml == (try String(contentsOf: Self.source, encoding: .utf8)))
    }

    @Test("GET /openapi.json serves openapi.yaml as JSON, with the deployment's keys in the request schemas")
    func served() async throws {
        let yaml = try String(contentsOf: Self.source, encoding: .utf8)
        try await GatewayHarness.withGateway { gateway in
            let answer = try await gateway.request(.GET, "/openapi.json")
            #expect(answer.status == 200)
            #expect(answer.contentType == "application/json")
            let served = answer.object
            let source = try #require(try Yams.load(yaml: yaml) as? [String: Any])
            #expect(served["openapi"] as? String == "3.1.0")
            // Every path and operation of the file, unchanged.
            #expect(NSDictionary(dictionary: served["paths"] as? [String: Any] ?? [:]) == NSDictionary(dictionary: source["paths"] as? [String: Any] ?? [:]))
            #expect(Set((served["paths"] as? [String: Any] ?? [:]).keys).isSuperset(of: [
                "/v1/accounts", "/v1/sessions", "/v1/sessions/anonymous", "/v1/sessions/current", "/v1/account",
                "/v1/account/password", "/v1/account/user-id", "/v1/account/reauthenticate", "/v1/account/events",
                "/v1/password-resets", "/v1/password-resets/confirm", "/v1/schema", "/health/live", "/health/ready", "/metrics",
            ]))
            let schemas = try #require((served["components"] as? [String: Any])?["schemas"] as? [String: Any])
            // The default configuration (SpeziAccount's): email userIds and a name required; every built-in key may be stored.
            let signUpDetails = try #require(schemas["SignUpDetails"] as? [String: Any])
            let properties = try #require(signUpDetails["properties"] as? [String: Any])
            #expect(Set(properties.keys) == ["name", "email", "dateOfBirth", "genderIdentity", "phoneNumbers"])
            #expect(signUpDetails["required"] as? [String] == ["name"])
            #expect(signUpDetails["additionalProperties"] as? Bool == false)
            #expect((properties["dateOfBirth"] as? [String: Any])?["format"] as? String == "date")
            let userId = try #require(schemas["UserId"] as? [String: Any])
            #expect((userId["allOf"] as? [[String: Any]])?.first?["pattern"] as? String == #"(?s)^(?:.*@.+)(?![\s\S])"#)
            let modifications = try #require(schemas["Modifications"] as? [String: Any])
            let nullableRemove = try #require((modifications["properties"] as? [String: Any])?["remove"] as? [String: Any])
            let remove = try #require((nullableRemove["anyOf"] as? [[String: Any]])?.first)
            #expect(Set(((remove["items"] as? [String: Any])?["enum"] as? [String]) ?? []) == ["email", "dateOfBirth", "genderIdentity", "phoneNumbers"])
        }
    }

    @Test("a rule's pattern is anchored to the whole value, its leading flags kept first")
    func anchoring() {
        #expect(OpenAPIDocument.anchored(".{8,}") == #"(?s)^(?:.{8,})(?![\s\S])"#)
        #expect(OpenAPIDocument.anchored("(?s).{0,500}") == #"(?s)^(?:.{0,500})(?![\s\S])"#)
        #expect(OpenAPIDocument.anchored("(?i)[a-z]+") == #"(?is)^(?:[a-z]+)(?![\s\S])"#)
        #expect(OpenAPIDocument.anchored("(?<word>a)b") == #"(?s)^(?:(?<word>a)b)(?![\s\S])"#)
    }
}
