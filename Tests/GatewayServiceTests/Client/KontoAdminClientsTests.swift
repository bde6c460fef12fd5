import Crypto
import Foundation
import GatewayService
import IdentityService
import KontoClient
import KontoClientAsyncHTTPClient
import KontoContracts
import KontoTestSupport
import Testing

/// The OpenID Provider's clients through KontoAdmin and `konto admin clients`, against a running gateway's admin
/// listener and the real services: registered, listed, changed, given a new secret, removed; the API's refusals as
/// KontoClientErrors, a malformed value refused before any call.
@Suite("KontoAdmin: OpenID clients", .timeLimit(.minutes(4)))
struct KontoAdminClientsTests {
    /// An EC P-256 public key as a JWK, and a JWK Set's JSON of it.
    static func publicKey(kid: String) -> (key: KontoOpenIDClientKey, jwkSet: String) {
        let raw = P256.Signing.PrivateKey().publicKey.rawRepresentation
        func base64URL(_ bytes: Data) -> String {
            bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let x = base64URL(raw.prefix(32))
        let y = base64URL(raw.suffix(32))
        let key = KontoOpenIDClientKey(kty: "EC", kid: kid, alg: "ES256", use: "sig", crv: "P-256", x: x, y: y)
        return (key, #"{"keys":[{"kty":"EC","kid":"\#(kid)","alg":"ES256","use":"sig","crv":"P-256","x":"\#(x)","y":"\#(y)"}]}"#)
    }

    /// The error `body` throws, as a KontoClientError.
    static func refusal(_ body: () async throws -> Void) async -> KontoClientError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? KontoClientError
        }
    }

    @Test("KontoAdmin: the file's client listed; one registered with its secret once, changed, given a new secret with an overlap, removed; refusals with the API's codes")
    func kontoAdmin() async throws {
        try await GatewayHarness.withGateway(configure: { $0.adminPort = 0 }, identityOptions: try AdminConsoleClientsTests.options()) { gateway in
            let admin = KontoAdmin(adminURL: try #require(gateway.adminURL), key: GatewayAdminTests.bootstrap.text, httpClient: gateway.http)
            let file = try await admin.openIDClients()
            #expect(file.map(\.id) == ["study-app"] && file.first?.source == "file" && file.first?.type == "public" && file.first?.authentication == nil)

            let settings = KontoOpenIDClientSettings(
                name: "Ledger", type: "confidential", authentication: "client_secret_post", redirectURIs: ["https://ledger.example.org/callback"],
                postLogoutRedirectURIs: ["https://ledger.example.org/bye"], scopes: ["openid", "profile", "offline_access"], firstParty: true,
                sectorIdentifier: "example.org"
            )
            let saved = try await admin.createOpenIDClient(id: "ledger", settings)
            let secret = try #require(saved.secret)
            #expect(secret.hasPrefix("kcs_") && secret.count == 47)
            let client = saved.client
            #expect(client.id == "ledger" && client.source == "api" && client.type == "confidential" && client.authentication == "client_secret_post")
            #expect(client.scopes == ["offline_access", "openid", "profile"] && client.firstParty && client.idTokenAlgorithm == "ES256" && client.sectorIdentifier == "example.org")
            #expect(client.redirectURIs == ["https://ledger.example.org/callback"] && client.postLogoutRedirectURIs == ["https://ledger.example.org/bye"])
            #expect(client.createdAt != nil && client.secretCreatedAt != nil && client.previousSecretExpiresAt == nil)

            // A private_key_jwt client: its keys given, no secret made.
            let (key, _) = Self.publicKey(kid: "signer-1")
            let keyed = try await admin.createOpenIDClient(id: "signer", KontoOpenIDClientSettings(
                name: "Signer", type: "confidential", authentication: "private_key_jwt", keys: [key], redirectURIs: ["https://signer.example.org/cb"]
            ))
            #expect(keyed.secret == nil && keyed.client.keys == [key] && keyed.client.scopes == ["openid"])
            #expect(try await admin.openIDClients().map(\.id) == ["study-app", "ledger", "signer"])

            // Changed: its settings replaced, its type and secret kept.
            var changed = settings
            changed.name = "Ledger 2"
            changed.redirectURIs = ["https://ledger.example.org/callback", "https://ledger.example.org/v2"]
            let updated = try await admin.updateOpenIDClient(id: "ledger", changed)
            #expect(updated.name == "Ledger 2" && updated.redirectURIs.count == 2 && updated.updatedAt != nil && updated.secretCreatedAt == client.secretCreatedAt)

            // A new secret, the previous one still accepted for ten minutes.
            let rotated = try await admin.rotateOpenIDClientSecret(id: "ledger", keepPreviousSeconds: 600)
            let next = try #require(rotated.secret)
            #expect(next != secret && next.hasPrefix("kcs_"))
            let until = try #require(rotated.client.previousSecretExpiresAt)
            #expect(until > Date().addingTimeInterval(500) && until < Date().addingTimeInterval(700))

            // Refusals: the API's codes; a value the API has no case for, before any call.
            #expect(await Self.refusal { _ = try await admin.createOpenIDClient(id: "ledger", settings) }?.code == "admin.clientExists")
            let invalid = await Self.refusal {
                _ = try await admin.createOpenIDClient(id: "ftp", KontoOpenIDClientSettings(name: "FTP", type: "public", redirectURIs: ["ftp://files.example.org/"]))
            }
            #expect(invalid?.code == "admin.invalidRequest" && invalid?.status == 422 && invalid?.detail?.contains("redirectUris") == true, "\(String(describing: invalid))")
            let usage = await Self.refusal {
                _ = try await admin.createOpenIDClient(id: "odd", KontoOpenIDClientSettings(name: "Odd", type: "hybrid", redirectURIs: ["https://odd.example.org/"]))
            }
            #expect(usage?.code == "client.usage" && usage?.status == 0)
            #expect(await Self.refusal { _ = try await admin.updateOpenIDClient(id: "study-app", settings) }?.code == "admin.clientInFile")
            #expect(await Self.refusal { _ = try await admin.rotateOpenIDClientSecret(id: "signer") }?.code == "admin.invalidRequest")
            let unknown = await Self.refusal { _ = try await admin.removeOpenIDClient(id: "nobody") }
            #expect(unknown?.code == "admin.clientNotFound" && unknown?.status == 404)
            let reader = try await admin.createKey(name: "reader", scopes: ["accounts:read"]).secret
            let lacking = await Self.refusal { _ = try await KontoAdmin(adminURL: try #require(gateway.adminURL), key: reader, httpClient: gateway.http).openIDClients() }
            #expect(lacking?.code == "admin.scopeMissing" && lacking?.status == 403)

            let removed = try await admin.removeOpenIDClient(id: "ledger")
            #expect(removed.id == "ledger" && removed.grantsEnded == 0 && removed.consentsRemoved == 0)
            #expect(try await admin.openIDClients().map(\.id) == ["study-app", "signer"])
            #expect(await Self.refusal { _ = try await admin.removeOpenIDClient(id: "ledger") }?.code == "admin.clientNotFound")
        }
    }

    @Test("a JWK Set's public keys are read; a private key in it is refused, not dropped")
    func jwkSets() throws {
        let (key, jwkSet) = Self.publicKey(kid: "k1")
        #expect(try KontoOpenIDClientKey.keys(jwkSet: Data(jwkSet.utf8)) == [key])
        let withPrivate = jwkSet.replacingOccurrences(of: #""use":"sig""#, with: #""use":"sig","d":"c2VjcmV0""#)
        #expect(throws: KontoClientError.self) { try KontoOpenIDClientKey.keys(jwkSet: Data(withPrivate.utf8)) }
        #expect(throws: KontoClientError.self) { try KontoOpenIDClientKey.keys(jwkSet: Data(#"[{"kty":"EC"}]"#.utf8)) }
        #expect(throws: KontoClientError.self) { try KontoOpenIDClientKey.keys(jwkSet: Data(#"{"keys":[{"kty":"EC"}]}"#.utf8)) }
    }

    @Test("konto admin clients: add (secret printed once, keys from a JWK Set file), list by default, update (every setting replaced, printed as listed), rotate, remove; refusals' codes")
    func commandLine() async throws {
        try await GatewayHarness.withGateway(configure: { $0.adminPort = 0 }, identityOptions: try AdminConsoleClientsTests.options()) { gateway in
            let root = GatewayAdminTests.bootstrap.text
            let executable = try ServiceProcess.executable(named: "konto")
            let environment = ["KONTO_ADMIN_URL": try #require(gateway.adminURL)]
            func konto(_ arguments: String...) async throws -> ServiceProcess.Run {
                try await ServiceProcess.run(executable, arguments: ["admin", "clients"] + arguments, environment: environment, input: root + "\n")
            }

            let added = try await konto(
                "add", "crm", "--name", "CRM", "--type", "confidential", "--redirect-uri", "https://crm.example.org/callback", "--redirect-uri",
                "https://crm.example.org/other", "--scope", "openid", "--scope", "email", "--id-token-algorithm", "ES256", "--sector", "example.org"
            )
            #expect(added.status == 0, "\(added.standardOutput) \(added.standardError)")
            let secret = try #require(added.standardOutput.firstMatch(of: /shown this once, not again[^)]*\): (kcs_[A-Za-z0-9_-]{43})\n/).map { String($0.output.1) }, "\(added.standardOutput)")
            #expect(added.standardOutput.hasPrefix("Registered crm (confidential, client_secret_basic)."))

            // --jwks: a private_key_jwt client (the default with keys), no secret printed.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-jwks-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let jwksFile = directory.appendingPathComponent("jwks.json")
            try Data(Self.publicKey(kid: "cli-key").jwkSet.utf8).write(to: jwksFile)
            let keyed = try await konto("add", "signer", "--name", "Signer", "--type", "confidential", "--redirect-uri", "https://signer.example.org/cb", "--jwks", jwksFile.path, "--json")
            #expect(keyed.status == 0 && !keyed.standardOutput.contains("\"secret\""), "\(keyed.standardOutput) \(keyed.standardError)")
            let keyedClient = (try JSONSerialization.jsonObject(with: Data(keyed.standardOutput.utf8)) as? [String: Any])?["client"] as? [String: Any]
            #expect(keyedClient?["authentication"] as? String == "private_key_jwt" && (keyedClient?["keys"] as? [[String: Any]])?.first?["kid"] as? String == "cli-key")

            // Listed (the default subcommand), never with a secret.
            let listed = try await konto("--json")
            let clients = try #require(try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [[String: Any]], "\(listed.standardOutput) \(listed.standardError)")
            #expect(clients.compactMap { $0["id"] as? String } == ["study-app", "crm", "signer"] && !listed.standardOutput.contains(secret))
            #expect(clients.first { $0["id"] as? String == "crm" }?["redirectUris"] as? [String] == ["https://crm.example.org/callback", "https://crm.example.org/other"])
            let text = try await konto("list")
            #expect(text.status == 0 && text.standardOutput.contains("crm  api  confidential/client_secret_basic  CRM") && text.standardOutput.hasSuffix("3 clients\n"), "\(text.standardOutput)")

            // Changed: every setting replaced (an option left out takes add's default), printed as list prints it.
            let updated = try await konto(
                "update", "crm", "--name", "CRM 2", "--type", "confidential", "--authentication", "client_secret_post", "--redirect-uri",
                "https://crm.example.org/v2", "--scope", "openid", "--scope", "profile"
            )
            #expect(updated.status == 0 && updated.standardOutput == "crm  api  confidential/client_secret_post  CRM 2  https://crm.example.org/v2  openid profile\n", "\(updated.standardOutput) \(updated.standardError)")
            let updatedJSON = try await konto("update", "crm", "--name", "CRM 3", "--type", "confidential", "--redirect-uri", "https://crm.example.org/v3", "--json")
            let changed = try #require(try JSONSerialization.jsonObject(with: Data(updatedJSON.standardOutput.utf8)) as? [String: Any], "\(updatedJSON.standardOutput) \(updatedJSON.standardError)")
            #expect(changed["id"] as? String == "crm" && changed["name"] as? String == "CRM 3" && changed["redirectUris"] as? [String] == ["https://crm.example.org/v3"])
            #expect(changed["authentication"] as? String == "client_secret_basic" && changed["scopes"] as? [String] == ["openid"] && changed["sectorIdentifier"] == nil)
            #expect(changed["updatedAt"] is String && changed["secret"] == nil && !updatedJSON.standardOutput.contains(secret))
            let relisted = try await konto("list")
            #expect(relisted.standardOutput.contains("crm  api  confidential/client_secret_basic  CRM 3  https://crm.example.org/v3  openid\n"), "\(relisted.standardOutput)")
            // --jwks again for a private_key_jwt client (its method the default with keys).
            let rekeyed = try await konto("update", "signer", "--name", "Signer 2", "--type", "confidential", "--redirect-uri", "https://signer.example.org/cb", "--jwks", jwksFile.path)
            #expect(rekeyed.status == 0 && rekeyed.standardOutput.hasPrefix("signer  api  confidential/private_key_jwt  Signer 2"), "\(rekeyed.standardOutput) \(rekeyed.standardError)")
            // Refused: the file's client, a change of kind, a missing redirect URI (before any call); nothing changed.
            let fileUpdate = try await konto("update", "study-app", "--name", "Study", "--type", "public", "--redirect-uri", "https://app.example.org/callback")
            #expect(fileUpdate.status != 0 && fileUpdate.standardError.contains("admin.clientInFile"), "\(fileUpdate.standardError)")
            let kindChange = try await konto("update", "crm", "--name", "CRM", "--type", "public", "--redirect-uri", "https://crm.example.org/v3")
            #expect(kindChange.status != 0 && kindChange.standardError.contains("admin.invalidRequest"), "\(kindChange.standardError)")
            let noRedirect = try await konto("update", "crm", "--name", "CRM", "--type", "confidential")
            #expect(noRedirect.status == 64 && noRedirect.standardError.contains("--redirect-uri"), "\(noRedirect.status) \(noRedirect.standardError)")
            let unchanged = try await konto("--json")
            let crmNow = (try JSONSerialization.jsonObject(with: Data(unchanged.standardOutput.utf8)) as? [[String: Any]])?.first { $0["id"] as? String == "crm" }
            #expect(crmNow?["name"] as? String == "CRM 3" && crmNow?["type"] as? String == "confidential")

            let rotated = try await konto("rotate", "crm", "--keep-previous", "3600")
            #expect(rotated.status == 0 && rotated.standardOutput.contains("still accepted until") && rotated.standardOutput.contains("shown this once"), "\(rotated.standardOutput) \(rotated.standardError)")
            #expect(!rotated.standardOutput.contains(secret))

            // A refusal: its code, a failing status.
            let inFile = try await konto("remove", "study-app")
            #expect(inFile.status != 0 && inFile.standardError.contains("admin.clientInFile"), "\(inFile.standardError)")
            let removed = try await konto("remove", "crm")
            #expect(removed.status == 0 && removed.standardOutput.contains("Removed crm (0 grants ended, 0 consents removed)."), "\(removed.standardOutput) \(removed.standardError)")
            let after = try await konto("--json")
            #expect((try JSONSerialization.jsonObject(with: Data(after.standardOutput.utf8)) as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["study-app", "signer"])
        }
    }
}
