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
        #expect(json == #"{"details":{"name":{"familyName":"Babbage","givenName":"Charles"}},"password":"correct horse battery","userId":"charles@example.org"}"#)
    }

    @Test("the banner's example signs up another account than README's quick start, so both run on one fresh stack")
    func notTheQuickStartsAccount() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let quickStart = try #require(readme.range(of: "<!-- quick-start:").map { readme[$0.upperBound...] })
        let signUp = try #require(quickStart.firstMatch(of: /konto signup (\S+)/)?.output.1)
        let json = try #require(SignUpExample.json(for: .default))
        let body = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(body["userId"] as? String != String(signUp), "both sign up \(signUp)")
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
        #expect(body["userId"] as? String == "charles")
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
