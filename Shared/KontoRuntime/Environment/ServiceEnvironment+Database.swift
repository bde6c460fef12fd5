import KontoPostgres

extension ServiceEnvironment {
    /// A service's database: the PostgreSQL URL in `url` (nil when unset: the service keeps its data in memory), its
    /// pool at most `connections` connections (1–1000; 20 by default; a LISTEN holds one). The names are
    /// the service's literals (`KONTO_IDENTITY_DATABASE_URL`, `KONTO_IDENTITY_DATABASE_CONNECTIONS`), as everywhere a
    /// variable is read, so docs/CONFIGURATION.md's test finds them.
    public func database(url: String, connections: String) throws(ServiceEnvironmentError) -> PostgresSettings? {
        guard let value = string(url) else { return nil }
        var settings: PostgresSettings
        do {
            settings = try PostgresSettings(url: value)
        } catch {
            throw ServiceEnvironmentError(variable: url, problem: "is not a usable PostgreSQL URL: \(error)")
        }
        settings.maximumConnections = try integer(connections, default: settings.maximumConnections, in: 1...1_000)
        return settings
    }
}
