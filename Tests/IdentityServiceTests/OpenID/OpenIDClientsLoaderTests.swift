import Crypto
import Foundation
@testable import IdentityService
import KontoContracts
import Testing

/// The clients file: what a deployment registers, and every mistake named with its client before Identity starts.
@Suite("OpenID Provider: the clients file")
struct OpenIDClientsLoaderTests {
    static let secret = "a-client-secret-of-at-least-32-characters"

    /// A directory with the files a clients file names.
    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("konto-clients-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: path + "/dashboard-secret"))
        try Data("short".utf8).write(to: URL(fileURLWithPath: path + "/short-secret"))
        let key = try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation).publicKey
        try JSONEncoder().encode(["keys": [key]]).write(to: URL(fileURLWithPath: path + "/service-jwks.json"))
        try Data(#"{"keys":[{"kty":"EC","crv":"P-256","x":"a","y":"b","d":"private"}]}"#.utf8).write(to: URL(fileURLWithPath: path + "/private-jwks.json"))
        return path
    }

    static func load(_ yaml: String, in directory: String) throws(OpenIDClientsError) -> OpenIDClients {
        try OpenIDClientsLoader().load(data: Data(yaml.utf8), json: false, source: "clients.yaml", directory: directory)
    }

    static func problems(_ yaml: String, in directory: String) -> [String] {
        do {
            _ = try load(yaml, in: directory)
            return []
        } catch {
            return error.problems
        }
    }

    @Test("a public app, a confidential site with a secret, a service with private_key_jwt; the secret kept as a digest and compared in constant time")
    func registered() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clients = try Self.load("""
            clients:
              - id: study-app
                name: Spezi Study
                type: public
                redirectUris: [org.example.study:/oauth2/callback, "http://127.0.0.1/callback"]
                scopes: [openid, profile, email, offline_access]
                firstParty: true
              - id: dashboard
                type: confidential
                authentication: client_secret_basic
                secretFile: dashboard-secret
                redirectUris: [https://dashboard.example.org/oauth2/callback]
                postLogoutRedirectUris: [https://dashboard.example.org/]
                idTokenAlgorithm: RS256
                sectorIdentifier: example.org
              - id: reports
                type: confidential
                authentication: private_key_jwt
                jwksFile: service-jwks.json
                redirectUris: [https://reports.example.org/callback]
            """, in: directory)
        let app = try #require(clients["study-app"])
        #expect(!app.isConfidential && app.isFirstParty && app.name == "Spezi Study")
        #expect(app.redirectURIs == ["org.example.study:/oauth2/callback", "http://127.0.0.1/callback"])
        #expect(app.scopes == ["openid", "profile", "email", "offline_access"] && app.idTokenAlgorithm == "ES256")
        let dashboard = try #require(clients["dashboard"])
        #expect(dashboard.isConfidential && dashboard.authentication.method == "client_secret_basic" && !dashboard.isFirstParty)
        #expect(dashboard.name == "dashboard" && dashboard.scopes == ["openid"] && dashboard.idTokenAlgorithm == "RS256" && dashboard.sectorIdentifier == "example.org")
        #expect(dashboard.accepts(secret: Self.secret))
        #expect(!dashboard.accepts(secret: Self.secret + "x") && !dashboard.accepts(secret: "") && !app.accepts(secret: Self.secret))
        if case .secret(_, let digest) = dashboard.authentication { #expect(digest != Array(Self.secret.utf8)) }
        let reports = try #require(clients["reports"])
        #expect(reports.authentication.method == "private_key_jwt")
    }

    @Test("every mistake, named with its client: unknown fields, types, redirect URIs, scopes, secrets, keys, duplicates")
    func mistakes() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let problems = Self.problems("""
            clients:
              - id: app
                type: public
                secretFile: dashboard-secret
                redirectUris: ["https://app.example.org/cb#fragment", "http://app.example.org/cb", "javascript:alert(1)"]
                scopes: [profile, admin]
                colour: blue
              - id: site
                type: confidential
                authentication: client_secret_post
                secretFile: short-secret
                redirectUris: [org.example.site:/callback]
              - id: site
                type: confidential
                authentication: private_key_jwt
                jwksFile: private-jwks.json
                redirectUris: [https://site.example.org/callback]
              - id: "bad id!"
                type: sometimes
              - id: missing
                type: confidential
                redirectUris: []
                idTokenAlgorithm: HS256
                firstParty: yes please
            """, in: directory)
        let expected = [
            #"client "app": colour: unknown field"#,
            #"client "app": authentication, secretFile, jwksFile: a public client keeps no secret"#,
            #"client "app": redirectUris: "https://app.example.org/cb#fragment" must be"#,
            #"client "app": redirectUris: "http://app.example.org/cb" must be"#,
            #"client "app": redirectUris: "javascript:alert(1)" must be"#,
            #"client "app": scopes: must include openid"#,
            #"client "app": scopes: "admin" is not one Konto offers"#,
            #"client "site": secretFile: the secret must have at least 32 characters"#,
            #"client "site": redirectUris: "org.example.site:/callback" must be"#,
            #"client "site": jwksFile: no EC P-256 or RSA public key in it"#,
            #"client "site": id: used by another client"#,
            #"client "bad id!": id: must be 1 to 128 letters"#,
            #"client "bad id!": type: must be public or confidential"#,
            #"client "missing": authentication: must be client_secret_basic, client_secret_post or private_key_jwt"#,
            #"client "missing": redirectUris: at least one"#,
            #"client "missing": firstParty: must be true or false"#,
            #"client "missing": idTokenAlgorithm: must be ES256 or RS256"#,
        ]
        for text in expected {
            #expect(problems.contains { $0.hasPrefix(text) }, "\(text) not in \(problems)")
        }
        #expect(problems.count == expected.count, "\(problems)")
        #expect(Self.problems("clients:\n  - id: x\n    type: confidential\n    authentication: client_secret_basic\n    secretFile: nowhere\n    redirectUris: [https://x.example.org/]\n", in: directory)
            == [#"client "x": secretFile: cannot read \#(directory)/nowhere"#])
        #expect(Self.problems("clientz: []", in: directory) == ["clients: missing (a list of clients)"])
        #expect(Self.problems("clients: []\nextra: 1", in: directory) == ["extra: unknown field (expected clients)"])
        #expect(Self.problems("clients: [: :", in: directory).first?.hasPrefix("not a clients file") == true)
        #expect(throws: OpenIDClientsError.self) { try OpenIDClientsLoader().load(path: directory + "/clients.toml") }
    }

    @Test("the settings: the issuer an https URL (http on a loopback host), without its trailing slash; a client's ID token algorithm has a key")
    func settings() throws {
        let keys = try OpenIDSigningKeys([try OpenIDSigningKey(pem: P256.Signing.PrivateKey().pemRepresentation)])
        #expect(try OpenIDProviderSettings(issuer: "https://accounts.example.org/", keys: keys).issuer == "https://accounts.example.org")
        #expect(try OpenIDProviderSettings(issuer: "http://localhost:8080", keys: keys).issuer == "http://localhost:8080")
        for refused in ["http://accounts.example.org", "https://accounts.example.org/?tenant=1", "accounts.example.org", ""] {
            #expect(throws: OpenIDKeyProblem.self, "\(refused)") { try OpenIDProviderSettings(issuer: refused, keys: keys) }
        }
        let rsaClient = OpenIDClient(id: "rs", name: "RS", authentication: .none, redirectURIs: ["https://rs.example.org/"], scopes: ["openid"], idTokenAlgorithm: "RS256")
        #expect(throws: OpenIDKeyProblem.self) { try OpenIDProviderSettings(issuer: "https://accounts.example.org", keys: keys, clients: OpenIDClients([rsaClient])) }
    }
}
