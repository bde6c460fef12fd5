import Foundation
import PostgresNIO

/// How to reach one PostgreSQL database: what a test hands to the code under test.
public struct PostgresTestDatabase: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String

    public init(host: String, port: Int, username: String, password: String?, database: String) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
    }

    /// Parses `postgres://user:password@host:port/database` (also `postgresql://`).
    public init(url: String) throws {
        guard
            let components = URLComponents(string: url),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme),
            let host = components.host, !host.isEmpty
        else {
            throw KontoTestingError(.invalidDatabaseURL, "expected postgres://user:password@host:port/database")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        self.init(
            host: host,
            port: components.port ?? 5432,
            username: components.user.flatMap { $0.removingPercentEncoding } ?? "postgres",
            password: components.password.flatMap { $0.removingPercentEncoding },
            database: database.isEmpty ? "postgres" : database
        )
    }

    /// The same server, another database.
    public func with(database: String) -> PostgresTestDatabase {
        var copy = self
        copy.database = database
        return copy
    }

    /// A URL for configuration files and environment variables (it carries the password).
    public var url: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = username
        components.password = password
        components.host = host
        components.port = port
        components.path = "/" + database
        return components.string ?? ""
    }

    public var clientConfiguration: PostgresClient.Configuration {
        PostgresClient.Configuration(host: host, port: port, username: username, password: password, database: database, tls: .disable)
    }

    public var connectionConfiguration: PostgresConnection.Configuration {
        PostgresConnection.Configuration(host: host, port: port, username: username, password: password, database: database, tls: .disable)
    }

    /// Never shows the password.
    public var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }
}
