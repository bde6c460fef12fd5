import Foundation
import KontoModel
import KontoRuntime
import KontoStack
import Testing

/// The stack banner's sign-up example, made from the schema (KontoStackTests runs it against a live stack).
@Suite("SignUpExample")
struct SignUpExampleTests {
    static func schema(_ yaml: String) throws -> AccountConfiguration {
        try AccountConfigurationLoader().load(data: Data(yaml.utf8), format: .yaml, source: "test")
    }

    @Test("the default schema's example carries the required name, and nothing the schema does not require")
    func defaultSchema() throws {
        let json = try #require(SignUpExample.json(for: .default))
        #expect(json == #"{"details":{"name":{"familyName":"Lovelace","givenName":"Ada"}},"password":"correct horse battery","userId":"ada@example.org"}"#)
    }

    @Test("a username schema's example has a username; every required custom key gets a value of its type")
    func customKeys() throws {
        let configuration = try Self.schema("""
            userIdType: username
            keys:
              - { identifier: userId, requirement: requires }
              - { identifier: password, requirement: requires }
              - { identifier: plan, type: enum, cases: [free, pro], requirement: requires }
              - { identifier: age, type: integer, requirement: requires }
              - { identifier: tags, type: stringList, requirement: requires }
              - { identifier: note, type: string, requirement: collects }
            """)
        let json = try #require(SignUpExample.json(for: configuration))
        let body = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(body["userId"] as? String == "ada")
        let details = try #require(body["details"] as? [String: Any])
        #expect(details["plan"] as? String == "free")
        #expect(details["age"] as? Int == 1)
        #expect(details["tags"] as? [String] == ["example"])
        #expect(details["note"] == nil)
    }

    @Test("no example where a required key's rule refuses every made-up value")
    func unguessable() throws {
        let configuration = try Self.schema("""
            keys:
              - { identifier: userId, requirement: requires }
              - { identifier: password, requirement: requires }
              - identifier: code
                type: string
                requirement: requires
                rules: [{ pattern: '[A-Z]{3}-[0-9]{4}', message: A code such as ABC-1234. }]
            """)
        #expect(SignUpExample.json(for: configuration) == nil)
    }
}
