import Crypto
import Foundation
@testable import IdentityService
import KontoModel
import Testing

@Suite struct IdentityProvidersLoaderTests {
    let directory: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-providers-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: directory + "/apple.p8", atomically: true, encoding: .utf8)
        try "s3cret\n".write(toFile: directory + "/example-secret", atomically: true, encoding: .utf8)
    }

    func load(_ text: String, json: Bool = false) throws(IdentityProvidersError) -> IdentityProviders {
        try IdentityProvidersLoader().load(data: Data(text.utf8), json: json, source: json ? "providers.json" : "providers.yaml", directory: directory)
    }

    @Test func readsAppleAndAGenericProvider() throws {
        let providers = try load("""
            linkByVerifiedEmail: true
            providers:
              - name: apple
                type: apple
                clientId: org.example.web
                audiences: [org.example.app]
                teamId: ABCDE12345
                keyId: XYZ987ABCD
                privateKeyFile: apple.p8
              - name: example
                displayName: Example ID
                issuer: https://id.example.org
                clientId: konto
                clientSecretFile: example-secret
                endpointHosts: [Keys.Example.org]
            """)
        #expect(providers.linkByVerifiedEmail)
        #expect(providers["example"]?.endpointHosts == ["keys.example.org"] && providers["apple"]?.endpointHosts == [])
        let apple = try #require(providers["apple"])
        #expect(apple.isApple && apple.hashedNonce && apple.issuer == "https://appleid.apple.com")
        #expect(apple.acceptedAudiences == ["org.example.web", "org.example.app"])
        guard case let .appleKey(team, key, _) = apple.authentication else { Issue.record("no Apple key"); return }
        #expect(team == "ABCDE12345" && key == "XYZ987ABCD")
        let example = try #require(providers["example"])
        #expect(example.displayName == "Example ID" && !example.hashedNonce && example.scopes.first == "openid")
        guard case let .secret(secret) = example.authentication else { Issue.record("no secret"); return }
        #expect(secret.value == "s3cret")
    }

    @Test func readsJSON() throws {
        let providers = try load(#"{"providers": [{"name": "dev", "issuer": "http://127.0.0.1:5556", "clientId": "konto"}]}"#, json: true)
        #expect(providers["dev"]?.issuer == "http://127.0.0.1:5556")
        #expect(providers.linkByVerifiedEmail == false)
    }

    @Test func aBadFileNamesEveryProblem() {
        do {
            _ = try load("""
                providers:
                  - name: Apple!
                    type: apple
                    clientId: org.example.web
                    privateKeyFile: missing.p8
                  - name: example
                    issuer: http://id.example.org
                    clientId: ""
                    clientSecret: a
                    clientSecretFile: example-secret
                    clientSecretfile: typo
                    endpointHosts: ["https://keys.example.org/"]
                  - name: example
                    type: saml
                """)
            Issue.record("accepted")
        } catch {
            let text = error.description
            for expected in [
                #"provider "Apple!": name: must be 1 to 32 lower-case letters"#,
                #"provider "Apple!": teamId: missing"#,
                #"provider "Apple!": keyId: missing"#,
                #"provider "Apple!": privateKeyFile: cannot read"#,
                #"provider "example": issuer: must be an https URL"#,
                #"provider "example": clientId: must be 1 to 255 characters"#,
                #"provider "example": clientSecret, clientSecretFile: give one of them"#,
                #"provider "example": clientSecretfile: unknown field"#,
                #"provider "example": endpointHosts: "https://keys.example.org/" is not a host name"#,
                #"provider "example": type: "saml" is not oidc or apple"#,
            ] {
                #expect(text.contains(expected), "missing: \(expected)\nin: \(text)")
            }
            #expect(text.split(separator: "\n").allSatisfy { $0.hasPrefix("providers.yaml: ") })
        }
    }

    @Test func duplicateNamesAndNonKeysAreRefused() throws {
        try "not a key".write(toFile: directory + "/bad.p8", atomically: true, encoding: .utf8)
        #expect(throws: IdentityProvidersError.self) {
            try load("""
                providers:
                  - {name: one, issuer: "https://a.example", clientId: a}
                  - {name: one, issuer: "https://b.example", clientId: b}
                """)
        }
        do {
            _ = try load("providers:\n  - {name: apple, type: apple, clientId: a, teamId: t, keyId: k, privateKeyFile: bad.p8}\n")
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("privateKeyFile: not a P-256 private key"))
        }
        #expect(throws: IdentityProvidersError.self) { try load("providers: 3") }
        #expect(throws: IdentityProvidersError.self) { try load("{]", json: true) }
    }
}

extension IdentityProvidersLoaderTests {
    @Test func theDeploymentsExampleLoadsOnceItsKeyAndSecretAreBesideIt() throws {
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("deploy/providers/providers.example.yaml")
        let copy = directory + "/providers.yaml"
        try FileManager.default.copyItem(atPath: example.path, toPath: copy)
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: directory + "/AuthKey_XYZ987ABCD.p8", atomically: true, encoding: .utf8)
        try "secret\n".write(toFile: directory + "/example-client-secret", atomically: true, encoding: .utf8)
        let providers = try IdentityProvidersLoader().load(path: copy)
        #expect(providers.providers.map(\.name) == ["apple", "example"])
        #expect(providers["apple"]?.isApple == true && providers.linkByVerifiedEmail == false)
    }
}
