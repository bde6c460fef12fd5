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

    @Test("the lifetimes: five minutes, thirty days idle, ninety at most by default; set within bounds; an absolute one shorter than the idle one, or one without an issuer, refused by name")
    func lifetimes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-oidc-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keyPath = directory + "/signing.pem"
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyPath))
        let base = ["KONTO_IDENTITY_OIDC_ISSUER": "https://accounts.example.org", "KONTO_IDENTITY_OIDC_KEYS": keyPath]
        let defaults = try #require(try IdentityServiceConfigurationTests.configuration(base).options.openID)
        #expect(defaults.accessTokenLifetime == .seconds(300) && defaults.refreshIdleLifetime == .seconds(30 * 86_400) && defaults.refreshAbsoluteLifetime == .seconds(90 * 86_400))
        let set = try #require(try IdentityServiceConfigurationTests.configuration(base.merging([
            "KONTO_IDENTITY_OIDC_ACCESS_TOKEN_SECONDS": "600", "KONTO_IDENTITY_OIDC_REFRESH_IDLE_DAYS": "7", "KONTO_IDENTITY_OIDC_REFRESH_ABSOLUTE_DAYS": "14",
        ]) { $1 }).options.openID)
        #expect(set.accessTokenLifetime == .seconds(600) && set.refreshIdleLifetime == .seconds(7 * 86_400) && set.refreshAbsoluteLifetime == .seconds(14 * 86_400))
        // An idle lifetime past the default absolute one raises the absolute one with it.
        let long = try #require(try IdentityServiceConfigurationTests.configuration(base.merging(["KONTO_IDENTITY_OIDC_REFRESH_IDLE_DAYS": "120"]) { $1 }).options.openID)
        #expect(long.refreshAbsoluteLifetime == .seconds(120 * 86_400))
        for (name, value) in [
            ("KONTO_IDENTITY_OIDC_ACCESS_TOKEN_SECONDS", "59"), ("KONTO_IDENTITY_OIDC_ACCESS_TOKEN_SECONDS", "3601"), ("KONTO_IDENTITY_OIDC_REFRESH_IDLE_DAYS", "0"),
            ("KONTO_IDENTITY_OIDC_REFRESH_ABSOLUTE_DAYS", "abc"),
        ] {
            #expect(throws: ServiceEnvironmentError.self, "\(name)=\(value)") {
                try IdentityServiceConfigurationTests.configuration(base.merging([name: value]) { $1 })
            }
        }
        do {
            _ = try IdentityServiceConfigurationTests.configuration(base.merging(["KONTO_IDENTITY_OIDC_REFRESH_IDLE_DAYS": "30", "KONTO_IDENTITY_OIDC_REFRESH_ABSOLUTE_DAYS": "10"]) { $1 })
            Issue.record("an absolute lifetime shorter than the idle one was taken")
        } catch let error as ServiceEnvironmentError {
            #expect(error.variable == "KONTO_IDENTITY_OIDC_REFRESH_ABSOLUTE_DAYS")
        }
        do {
            _ = try IdentityServiceConfigurationTests.configuration(["KONTO_IDENTITY_OIDC_ACCESS_TOKEN_SECONDS": "600"])
            Issue.record("a lifetime without an issuer was taken")
        } catch let error as ServiceEnvironmentError {
            #expect(error.variable == "KONTO_IDENTITY_OIDC_ACCESS_TOKEN_SECONDS")
        }
    }
}
