import Foundation
import KontoPostgres
import KontoTestSupport
import NIOSSL
import PostgresNIO
import Testing

@Suite("Database settings from a URL")
struct PostgresSettingsTests {
    @Test("a full URL is read, percent-encoding undone, and the password never described")
    func fullURL() throws {
        let settings = try PostgresSettings(url: "postgres://profile%40svc:p%40ss%3Aword@db.internal:6543/konto_profile?sslmode=require")
        #expect(settings.host == "db.internal")
        #expect(settings.port == 6543)
        #expect(settings.username == "profile@svc")
        #expect(settings.password == "p@ss:word")
        #expect(settings.database == "konto_profile")
        #expect(settings.tlsMode == .require)
        #expect(!settings.description.contains("p@ss"))
        #expect(!settings.description.contains("p%40ss"))
        #expect(settings.description == "postgres://profile@svc@db.internal:6543/konto_profile?sslmode=require")
        #expect(!String(reflecting: PostgresSettingsError("x")).contains("p@ss"))

        let client = try settings.clientConfiguration()
        #expect(client.host == "db.internal")
        #expect(client.port == 6543)
        #expect(client.password == "p@ss:word")
        #expect(client.database == "konto_profile")
        #expect(client.options.connectTimeout == .seconds(3))
    }

    @Test("each sslmode means what it means to libpq: encryption enforced or not, certificate verified or not")
    func tlsModes() throws {
        let expected: [(PostgresSettings.TLSMode, enforced: Bool, verification: CertificateVerification?)] = [
            (.disable, false, nil),
            (.prefer, false, CertificateVerification.none),
            (.require, true, CertificateVerification.none),
            (.verifyCA, true, .noHostnameVerification),
            (.verifyFull, true, .fullVerification),
        ]
        #expect(expected.map(\.0) == PostgresSettings.TLSMode.allCases)
        for (mode, enforced, verification) in expected {
            let settings = try PostgresSettings(url: "postgres://profile:secret@db.internal/konto?sslmode=\(mode.rawValue)")
            #expect(settings.tlsMode == mode)
            #expect(settings.tlsMode.isEnforced == enforced)
            #expect(settings.description.hasSuffix("?sslmode=\(mode.rawValue)"))
            let tls = try settings.tlsConfiguration()
            #expect(tls?.certificateVerification == verification, "\(mode)")
            // Without sslrootcert, verification trusts the system's roots.
            #expect(tls.map { $0.trustRoots == nil || $0.trustRoots == .default } ?? true)
            _ = try settings.clientConfiguration()
        }
    }

    @Test("sslrootcert gives the CA to verify against; with require it verifies as verify-ca does, as in libpq")
    func rootCertificate() throws {
        try Self.withFile(Self.certificatePEM) { path in
            let certificate = try NIOSSLCertificate(bytes: Array(Self.certificatePEM.utf8), format: .pem)
            for mode in [PostgresSettings.TLSMode.verifyFull, .verifyCA, .require] {
                let settings = try PostgresSettings(url: "postgres://u@db.internal/konto?sslmode=\(mode.rawValue)&sslrootcert=\(path)")
                #expect(settings.tlsRootCertificatePath == path)
                #expect(settings.description.hasSuffix("&sslrootcert=\(path)"))
                let tls = try #require(try settings.tlsConfiguration())
                #expect(tls.trustRoots == .certificates([certificate]))
                #expect(tls.certificateVerification == (mode == .verifyFull ? .fullVerification : .noHostnameVerification))
            }
            // prefer never verifies, so the CA file changes nothing there.
            let prefer = try PostgresSettings(url: "postgres://u@db.internal/konto?sslmode=prefer&sslrootcert=\(path)")
            #expect(try prefer.tlsConfiguration()?.certificateVerification == CertificateVerification.none)
        }
        // `system`, as libpq spells it: the system's roots.
        let system = try PostgresSettings(url: "postgres://u@db.internal/konto?sslmode=verify-full&sslrootcert=system")
        let tls = try #require(try system.tlsConfiguration())
        #expect(tls.trustRoots == nil || tls.trustRoots == .default)
        #expect(tls.certificateVerification == .fullVerification)
    }

    @Test("a missing, unreadable or certificate-less CA file is a clear error naming sslrootcert, from the URL and from the settings")
    func unreadableRootCertificate() throws {
        let missing = "/nonexistent/konto-ca-\(UInt64.random(in: 0 ... .max)).pem"
        let fromURL = #expect(throws: PostgresSettingsError.self) {
            try PostgresSettings(url: "postgres://u:secret@db.internal/konto?sslmode=verify-full&sslrootcert=\(missing)")
        }
        #expect(fromURL?.description.contains("sslrootcert") == true)
        #expect(fromURL?.description.contains(missing) == true)
        #expect(fromURL?.description.contains("secret") == false)

        let settings = PostgresSettings(host: "db.internal", username: "u", password: nil, database: "konto", tlsMode: .verifyCA, tlsRootCertificatePath: missing)
        let fromSettings = #expect(throws: PostgresSettingsError.self) { try settings.clientConfiguration() }
        #expect(fromSettings?.description.contains("sslrootcert") == true)

        try Self.withFile("not a certificate") { path in
            let error = #expect(throws: PostgresSettingsError.self) {
                try PostgresSettings(url: "postgres://u@db.internal/konto?sslmode=verify-ca&sslrootcert=\(path)")
            }
            #expect(error?.description.contains("sslrootcert") == true)
        }
        let empty = #expect(throws: PostgresSettingsError.self) {
            try PostgresSettings(url: "postgres://u@db.internal/konto?sslmode=verify-ca&sslrootcert=")
        }
        #expect(empty?.description.contains("sslrootcert") == true)
    }

    @Test("the pool gets the server, credentials, connect timeout, size and keep-alive")
    func clientConfiguration() throws {
        var settings = try PostgresSettings(url: "postgres://profile:secret@db.internal:6543/konto_profile?sslmode=verify-full")
        settings.connectTimeout = .milliseconds(1500)
        settings.maximumConnections = 7
        let client = try settings.clientConfiguration()
        #expect(client.host == "db.internal")
        #expect(client.port == 6543)
        #expect(client.username == "profile")
        #expect(client.password == "secret")
        #expect(client.database == "konto_profile")
        #expect(client.options.connectTimeout == .milliseconds(1500))
        #expect(client.options.maximumConnections == 7)
        #expect(client.options.keepAliveBehavior?.frequency == .seconds(15))
    }

    /// A temporary file holding `contents`, removed afterwards.
    static func withFile(_ contents: String, _ body: (String) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("konto-ca-\(UUID().uuidString).pem").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(path)
    }

    static let certificatePEM = TLSTestCertificate.certificatePEM

    @Test("defaults: port 5432, user postgres, database named after the user, TLS off")
    func defaults() throws {
        let settings = try PostgresSettings(url: "postgresql://localhost")
        #expect(settings.port == 5432)
        #expect(settings.username == "postgres")
        #expect(settings.password == nil)
        #expect(settings.database == "postgres")
        #expect(settings.tlsMode == .disable)
        let named = try PostgresSettings(url: "postgres://konto@localhost")
        #expect(named.database == "konto")
    }

    @Test("malformed URLs, unknown parameters and unknown sslmodes are refused without echoing the URL", arguments: [
        "mysql://user:secret@localhost/db",
        "postgres:///db",
        "not a url at all secret",
        "postgres://user:secret@localhost/db?sslmode=verify_full",
        "postgres://user:secret@localhost/db?sslmode=allow",
        "postgres://user:secret@localhost/db?sslmod=require",
        "postgres://user:secret@localhost/db?sslcert=/client.pem",
    ])
    func refused(url: String) {
        let error = #expect(throws: PostgresSettingsError.self) {
            try PostgresSettings(url: url)
        }
        #expect(error?.description.contains("secret") == false)
        #expect(error?.description.hasPrefix(PostgresSettingsError.code) == true)
    }

    @Test(".env.example's placeholder passwords are refused, saying so", arguments: [
        "postgres://konto_identity:replace-me-identity@postgres:5432/konto_identity",
        "postgres://konto:Change-Me-Please@localhost/db",
    ])
    func placeholderPassword(url: String) {
        let error = #expect(throws: PostgresSettingsError.self) {
            try PostgresSettings(url: url)
        }
        #expect(error?.description.contains("placeholder") == true)
        #expect(error?.description.lowercased().contains("replace-me-identity") == false)
    }
}
