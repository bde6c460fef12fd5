import Crypto
import Foundation
import IdentityService
import KontoRuntime
import Testing

/// Konto as an OpenID Provider, from the environment.
@Suite("Identity configuration: the OpenID Provider")
struct IdentityOpenIDConfigurationTests {
    @Test("off unless KONTO_IDENTITY_OIDC_ISSUER is set; then its keys are required, read, and the clients file with them; each mistake names its variable")
    func openID() throws {
        #expect(try IdentityServiceConfigurationTests.configuration([:]).options.openID == nil)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-oidc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keyPath = directory + "/signing.pem"
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyPath))
        let clientsPath = directory + "/clients.yaml"
        try Data("clients:\n  - id: app\n    type: public\n    redirectUris: [org.example.app:/cb]\n".utf8).write(to: URL(fileURLWithPath: clientsPath))

        let on = try IdentityServiceConfigurationTests.configuration([
            "KONTO_IDENTITY_OIDC_ISSUER": "https://accounts.example.org", "KONTO_IDENTITY_OIDC_KEYS": keyPath, "KONTO_IDENTITY_OIDC_CLIENTS": clientsPath,
        ])
        let settings = try #require(on.options.openID)
        #expect(settings.issuer == "https://accounts.example.org" && settings.keys.keys.count == 1 && settings.clients["app"] != nil)

        func variable(_ variables: [String: String]) -> String? {
            do {
                _ = try IdentityServiceConfigurationTests.configuration(variables)
                return nil
            } catch let error as ServiceEnvironmentError {
                return error.variable
            } catch {
                return "\(error)"
            }
        }
        #expect(variable(["KONTO_IDENTITY_OIDC_KEYS": keyPath]) == "KONTO_IDENTITY_OIDC_KEYS")
        #expect(variable(["KONTO_IDENTITY_OIDC_CLIENTS": clientsPath]) == "KONTO_IDENTITY_OIDC_CLIENTS")
        #expect(variable(["KONTO_IDENTITY_OIDC_ISSUER": "https://accounts.example.org"]) == "KONTO_IDENTITY_OIDC_KEYS")
        #expect(variable(["KONTO_IDENTITY_OIDC_ISSUER": "https://accounts.example.org", "KONTO_IDENTITY_OIDC_KEYS": directory + "/none.pem"]) == "KONTO_IDENTITY_OIDC_KEYS")
        #expect(variable(["KONTO_IDENTITY_OIDC_ISSUER": "ftp://accounts.example.org", "KONTO_IDENTITY_OIDC_KEYS": keyPath]) == "KONTO_IDENTITY_OIDC_ISSUER")
        #expect(variable(["KONTO_IDENTITY_OIDC_ISSUER": "https://accounts.example.org", "KONTO_IDENTITY_OIDC_KEYS": keyPath, "KONTO_IDENTITY_OIDC_CLIENTS": keyPath]) == "KONTO_IDENTITY_OIDC_CLIENTS")
    }
}
