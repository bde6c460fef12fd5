import Foundation
import KontoPostgres
import KontoTestSupport
import Logging
import NIOSSL
import PostgresNIO
import Testing

/// What each `sslmode` does against a real server with a self-signed certificate.
@Suite("TLS to PostgreSQL")
struct PostgresTLSTests {
    // The key of ``PostgresSettingsTests/certificatePEM``, made for tests only.
    static let privateKeyPEM = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzZZZatq5nHxoAHc/
ws1zBJWVhjUUpASSB9l403dWzXGhRANCAAStTsQ7QTyuaJh7YQm4n6bq+2LdGgRN
STa9rgkM3bOdmOzhe6o/LdETdWwHsGBfOnJKJZxcZkZthQE7C8Z52igo
-----END PRIVATE KEY-----
"""

    let logger: Logger = {
        var logger = Logger(label: "test.tls")
        logger.logLevel = .critical
        return logger
    }()

    @Test("require encrypts a self-signed server without verifying it; verify-ca and verify-full trust only sslrootcert's CA")
    func modesAgainstServer() async throws {
        let cluster = try await TemporaryPostgresCluster.start()
        do {
            let certificatePath = try Self.enableTLS(on: cluster)
            try await cluster.stop()
            try await cluster.start()
            let base = "postgres://postgres:\(cluster.password)@\(cluster.host):\(cluster.port)/postgres"

            #expect(try await usesTLS(try PostgresSettings(url: base + "?sslmode=disable")) == false)
            #expect(try await usesTLS(try PostgresSettings(url: base + "?sslmode=prefer")) == true)
            #expect(try await usesTLS(try PostgresSettings(url: base + "?sslmode=require")) == true)
            // The system's roots do not know the test CA.
            await #expect(throws: (any Error).self) {
                try await usesTLS(try PostgresSettings(url: base + "?sslmode=verify-ca"))
            }
            await #expect(throws: (any Error).self) {
                try await usesTLS(try PostgresSettings(url: base + "?sslmode=verify-full"))
            }
            #expect(try await usesTLS(try PostgresSettings(url: base + "?sslmode=verify-ca&sslrootcert=\(certificatePath)")) == true)
            #expect(try await usesTLS(try PostgresSettings(url: base + "?sslmode=verify-full&sslrootcert=\(certificatePath)")) == true)
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
    }

    /// Whether a connection made with `settings`' TLS configuration is encrypted, as the server sees it.
    private func usesTLS(_ settings: PostgresSettings) async throws -> Bool {
        let tls: PostgresConnection.Configuration.TLS
        if let configuration = try settings.tlsConfiguration() {
            let context = try NIOSSLContext(configuration: configuration)
            tls = settings.tlsMode.isEnforced ? .require(context) : .prefer(context)
        } else {
            tls = .disable
        }
        let configuration = PostgresConnection.Configuration(
            host: settings.host,
            port: settings.port,
            username: settings.username,
            password: settings.password,
            database: settings.database,
            tls: tls
        )
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        do {
            let rows = try await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: logger)
            var encrypted = false
            for try await value in rows.decode(Bool.self) { encrypted = value }
            try await connection.close()
            return encrypted
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Writes the test certificate and key into the data directory (owned as the server needs) and turns TLS on.
    /// Returns the certificate's path, which is also the CA a client must trust.
    private static func enableTLS(on cluster: TemporaryPostgresCluster) throws -> String {
        let directory = cluster.dataDirectory
        let owner = try FileManager.default.attributesOfItem(atPath: directory)
        let certificate = directory + "/konto-test.crt"
        let key = directory + "/konto-test.key"
        try PostgresSettingsTests.certificatePEM.write(toFile: certificate, atomically: true, encoding: .utf8)
        try privateKeyPEM.write(toFile: key, atomically: true, encoding: .utf8)
        for path in [certificate, key] {
            try FileManager.default.setAttributes([
                .ownerAccountID: owner[.ownerAccountID] as Any,
                .groupOwnerAccountID: owner[.groupOwnerAccountID] as Any,
                .posixPermissions: 0o600,
            ], ofItemAtPath: path)
        }
        let settings = "\nssl = on\nssl_cert_file = '\(certificate)'\nssl_key_file = '\(key)'\n"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/postgresql.conf"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(settings.utf8))
        try handle.close()
        return certificate
    }
}
