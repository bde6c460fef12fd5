import Foundation
@testable import GatewayService
import KontoModel
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
            // Every path and operation of the file, unchanged but for the problem responses added beside its own.
            // The admin API's paths are the admin listener's document's alone (GatewayAdminTests).
            let servedPaths = served["paths"] as? [String: Any] ?? [:]
            let sourcePaths = (source["paths"] as? [String: Any] ?? [:]).filter { !OpenAPIDocument.isAdminPath($0.key) }
            #expect(Set(servedPaths.keys) == Set(sourcePaths.keys))
            for (path, item) in sourcePaths {
                for (method, operation) in item as? [String: Any] ?? [:] {
                    var written = operation as? [String: Any] ?? [:]
                    var shown = (servedPaths[path] as? [String: Any])?[method] as? [String: Any] ?? [:]
                    let writtenResponses = written.removeValue(forKey: "responses") as? [String: Any] ?? [:]
                    let shownResponses = shown.removeValue(forKey: "responses") as? [String: Any] ?? [:]
                    #expect(NSDictionary(dictionary: written) == NSDictionary(dictionary: shown), "\(method) \(path)")
                    #expect(NSDictionary(dictionary: writtenResponses) == NSDictionary(dictionary: shownResponses.filter { writtenResponses[$0.key] != nil }))
                    #expect(Set(shownResponses.keys).subtracting(writtenResponses.keys).isSubset(of: ["401", "403", "404", "409", "412", "422", "429"]))
                }
            }
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

    @Test("each operation declares its refusals status by status (401, 403, 404, 409, 412, 422, 429) with the problem schema and the codes behind them")
    func problems() throws {
        let served = try #require(try JSONSerialization.jsonObject(with: OpenAPIDocument.served(for: .default)) as? [String: Any])
        let paths = try #require(served["paths"] as? [String: Any])
        func responses(_ method: String, _ path: String) -> [String: [String: Any]] {
            let operation = (paths[path] as? [String: Any])?[method] as? [String: Any]
            return (operation?["responses"] as? [String: Any] ?? [:]).compactMapValues { $0 as? [String: Any] }
        }
        func codes(_ response: [String: Any]?) -> String { response?["description"] as? String ?? "" }
        let logIn = responses("post", "/v1/sessions")
        #expect(Set(logIn.keys) == ["200", "202", "401", "404", "422", "429", "default"])
        #expect(codes(logIn["401"]).contains("[`account.wrongCredentials`](/problems/account.wrongCredentials)"))
        #expect(codes(logIn["429"]).contains("`account.throttled`") && codes(logIn["429"]).contains("`request.rateLimited`"))
        #expect(codes(logIn["429"]).hasPrefix("Too Many Requests: "))
        #expect((logIn["429"]?["headers"] as? [String: Any])?["Retry-After"] != nil)
        let schema = ((logIn["422"]?["content"] as? [String: Any])?["application/problem+json"] as? [String: Any])?["schema"] as? [String: Any]
        #expect(schema?["$ref"] as? String == "#/components/schemas/Problem")
        // A session's check adds 401; Profile's answers 404 and 412; a required verified address 403.
        let modify = responses("patch", "/v1/account")
        #expect(codes(modify["401"]).contains("`account.unauthenticated`"))
        #expect(codes(modify["412"]).contains("`account.versionConflict`"))
        #expect(codes(modify["403"]).contains("`account.emailNotVerified`"))
        #expect(codes(modify["422"]).contains("`account.mutatingNonMutableAccountKeys`"))
        #expect(codes(responses("put", "/v1/account/user-id")["409"]).contains("`account.credentialsTaken`"))
        // Probes are never limited, and refuse nothing one by one.
        #expect(Set(responses("get", "/health/live").keys) == ["200", "default"])
        // Every operation of the document has its services' methods named (an unknown one would declare too little).
        for (_, item) in paths {
            for (_, operation) in item as? [String: Any] ?? [:] {
                let operationId = try #require((operation as? [String: Any])?["operationId"] as? String)
                #expect(OpenAPIDocument.upstreamMethods[operationId] != nil, "\(operationId) names no methods")
            }
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
