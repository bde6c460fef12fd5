import Foundation
import NIOSSL
import PostgresNIO

/// How a service reaches its database, read from a
/// `postgres://user:password@host:port/database?sslmode=…&sslrootcert=…` URL.
///
/// ``description`` never shows the password, so settings can be logged as they are.
public struct PostgresSettings: Sendable, Equatable, CustomStringConvertible {
    /// Whether the connection is encrypted and how the server is verified, with libpq's `sslmode` names and meanings.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, plain otherwise; the certificate is not verified.
        case prefer
        /// TLS or no connection; the certificate is not verified, unless a CA file is given (`sslrootcert`): then,
        /// as libpq does, it is verified as with ``verifyCA``.
        case require
        /// TLS; the certificate must chain to the CA (`sslrootcert`, else the system roots); any host name.
        case verifyCA = "verify-ca"
        /// As ``verifyCA``, and the certificate must name the host connected to.
        case verifyFull = "verify-full"

        /// Whether a server without TLS is refused.
        public var isEnforced: Bool {
            self != .disable && self != .prefer
        }
    }

    /// `sslrootcert=system`: the system's roots, as libpq spells it.
    public static let systemRootCertificates = "system"

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tlsMode: TLSMode
    /// A PEM file of the certificate authorities to trust (`sslrootcert`); `nil` or ``systemRootCertificates`` for
    /// the system's roots.
    public var tlsRootCertificatePath: String?
    /// How long opening one TCP connection may take; kept short so an outage is noticed quickly.
    public var connectTimeout: Duration
    /// Upper bound of pooled connections per process.
    public var maximumConnections: Int
    /// How long a pooled connection may sit idle before the pool checks it with `SELECT 1`, so a dead one is
    /// replaced before a query finds it.
    public var keepAliveFrequency: Duration

    public init(
        host: String,
        port: Int = 5432,
        username: String,
        password: String?,
        database: String,
        tlsMode: TLSMode = .disable,
        tlsRootCertificatePath: String? = nil,
        connectTimeout: Duration = .seconds(3),
        maximumConnections: Int = 20,
        keepAliveFrequency: Duration = .seconds(15)
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tlsMode = tlsMode
        self.tlsRootCertificatePath = tlsRootCertificatePath
        self.connectTimeout = connectTimeout
        self.maximumConnections = maximumConnections
        self.keepAliveFrequency = keepAliveFrequency
    }

    /// Parses `postgres://` or `postgresql://` URLs; user, password and database may be percent-encoded.
    ///
    /// Without a user the user is `postgres`; without a database, the user's name (as libpq does).
    /// The query parameters understood are `sslmode` (``TLSMode``) and `sslrootcert` (a PEM file, or `system`);
    /// others are refused so a typo is not silently ignored. A CA file is read here, so a missing or unreadable one
    /// stops the service at start.
    public init(url: String) throws(PostgresSettingsError) {
        guard
            let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), ["postgres", "postgresql"].contains(scheme),
            let host = components.host, !host.isEmpty
        else {
            throw PostgresSettingsError("expected postgres://user:password@host:port/database")
        }
        var tlsMode = TLSMode.disable
        var rootCertificatePath: String?
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    throw PostgresSettingsError("unsupported sslmode (expected one of disable, prefer, require, verify-ca, verify-full)")
                }
                tlsMode = mode
            case "sslrootcert":
                guard let value = item.value, !value.isEmpty else {
                    throw PostgresSettingsError("sslrootcert needs a file path (or system)")
                }
                rootCertificatePath = value
            default:
                throw PostgresSettingsError("unsupported URL parameter \"\(item.name)\" (only sslmode and sslrootcert are understood)")
            }
        }
        let username = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        let password = components.password.flatMap { $0.removingPercentEncoding }
        // .env.example's database passwords (`replace-me-…`) must never reach a database: compose would set them.
        // (The same marks as KontoRuntime's check of the wire secret; the two modules share no dependency.)
        if let password, ["replace-with", "replace-me", "change-me", "changeme"].contains(where: password.lowercased().contains) {
            throw PostgresSettingsError("the password is a placeholder from .env.example (generate one with: openssl rand -hex 32)")
        }
        let path = components.path.drop { $0 == "/" }
        let database = String(path).removingPercentEncoding ?? String(path)
        self.init(
            host: host,
            port: components.port ?? 5432,
            username: username,
            password: password,
            database: database.isEmpty ? username : database,
            tlsMode: tlsMode,
            tlsRootCertificatePath: rootCertificatePath
        )
        _ = try self.tlsConfiguration()
    }

    /// The password is left out on purpose.
    public var description: String {
        let rootCertificate = tlsRootCertificatePath.map { "&sslrootcert=\($0)" } ?? ""
        return "postgres://\(username)@\(host):\(port)/\(database)?sslmode=\(tlsMode.rawValue)\(rootCertificate)"
    }

    /// The TLS configuration ``tlsMode`` and ``tlsRootCertificatePath`` ask for; `nil` for plain TCP.
    /// - Throws: ``PostgresSettingsError`` naming `sslrootcert` when the CA file cannot be read as PEM certificates.
    public func tlsConfiguration() throws(PostgresSettingsError) -> TLSConfiguration? {
        let verification: CertificateVerification
        switch tlsMode {
        case .disable:
            return nil
        case .prefer:
            verification = .none
        case .require:
            verification = hasRootCertificateFile ? .noHostnameVerification : .none
        case .verifyCA:
            verification = .noHostnameVerification
        case .verifyFull:
            verification = .fullVerification
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = verification
        if verification != .none, let path = tlsRootCertificatePath, hasRootCertificateFile {
            configuration.trustRoots = .certificates(try Self.certificates(at: path))
        }
        return configuration
    }

    private var hasRootCertificateFile: Bool {
        tlsRootCertificatePath.map { $0 != Self.systemRootCertificates } ?? false
    }

    private static func certificates(at path: String) throws(PostgresSettingsError) -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw PostgresSettingsError("sslrootcert \"\(path)\" cannot be read as PEM certificates")
        }
        guard !certificates.isEmpty else {
            throw PostgresSettingsError("sslrootcert \"\(path)\" holds no certificate")
        }
        return certificates
    }

    /// A pooled client configuration with these settings; ``tlsConfiguration()`` says what its TLS is.
    public func clientConfiguration() throws(PostgresSettingsError) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        if let configuration = try tlsConfiguration() {
            tls = tlsMode.isEnforced ? .require(configuration) : .prefer(configuration)
        } else {
            tls = .disable
        }
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: tls
        )
        configuration.options.connectTimeout = connectTimeout
        configuration.options.maximumConnections = maximumConnections
        configuration.options.keepAliveBehavior = .init(frequency: keepAliveFrequency)
        return configuration
    }
}
