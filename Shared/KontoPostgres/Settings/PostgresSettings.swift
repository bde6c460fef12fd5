import Foundation
import NIOSSL
import PostgresNIO

/// How a service reaches its database, read from a `postgres://user:password@host:port/database?sslmode=…` URL.
///
/// ``description`` never shows the password, so settings can be logged as they are.
public struct PostgresSettings: Sendable, Equatable, CustomStringConvertible {
    /// Whether the connection is encrypted, as libpq's `sslmode` names it.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        case disable
        case prefer
        case require
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tlsMode: TLSMode
    /// How long opening one TCP connection may take; kept short so an outage is noticed quickly.
    public var connectTimeout: Duration
    /// Upper bound of pooled connections per process.
    public var maximumConnections: Int

    public init(
        host: String,
        port: Int = 5432,
        username: String,
        password: String?,
        database: String,
        tlsMode: TLSMode = .disable,
        connectTimeout: Duration = .seconds(3),
        maximumConnections: Int = 20
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tlsMode = tlsMode
        self.connectTimeout = connectTimeout
        self.maximumConnections = maximumConnections
    }

    /// Parses `postgres://` or `postgresql://` URLs; user, password and database may be percent-encoded.
    ///
    /// Without a user the user is `postgres`; without a database, the user's name (as libpq does).
    /// The only query parameter understood is `sslmode` (`disable`, `prefer`, `require`); others are refused so a
    /// typo is not silently ignored.
    public init(url: String) throws(PostgresSettingsError) {
        guard
            let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), ["postgres", "postgresql"].contains(scheme),
            let host = components.host, !host.isEmpty
        else {
            throw PostgresSettingsError("expected postgres://user:password@host:port/database")
        }
        var tlsMode = TLSMode.disable
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw PostgresSettingsError("unsupported URL parameter \"\(item.name)\" (only sslmode is understood)")
            }
            guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                throw PostgresSettingsError("unsupported sslmode (expected one of disable, prefer, require)")
            }
            tlsMode = mode
        }
        let username = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        let path = components.path.drop { $0 == "/" }
        let database = String(path).removingPercentEncoding ?? String(path)
        self.init(
            host: host,
            port: components.port ?? 5432,
            username: username,
            password: components.password.flatMap { $0.removingPercentEncoding },
            database: database.isEmpty ? username : database,
            tlsMode: tlsMode
        )
    }

    /// The password is left out on purpose.
    public var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)?sslmode=\(tlsMode.rawValue)"
    }

    /// A pooled client configuration with these settings.
    public var clientConfiguration: PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS = switch tlsMode {
        case .disable: .disable
        case .prefer: .prefer(.makeClientConfiguration())
        case .require: .require(.makeClientConfiguration())
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
        return configuration
    }
}

extension PostgresSettings {
    /// A single-connection configuration with these settings (``PinnedConnections``).
    public func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS = switch tlsMode {
        case .disable: .disable
        case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        var configuration = PostgresConnection.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: tls
        )
        configuration.options.connectTimeout = .nanoseconds(
            connectTimeout.components.seconds * 1_000_000_000 + connectTimeout.components.attoseconds / 1_000_000_000
        )
        return configuration
    }
}
