import KontoPostgres
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

        let client = settings.clientConfiguration
        #expect(client.host == "db.internal")
        #expect(client.port == 6543)
        #expect(client.password == "p@ss:word")
        #expect(client.database == "konto_profile")
        #expect(client.options.connectTimeout == .seconds(3))
    }

    @Test("the single-connection configuration carries the same server, credentials, TLS mode and connect timeout", arguments: PostgresSettings.TLSMode.allCases)
    func connectionConfiguration(_ mode: PostgresSettings.TLSMode) throws {
        var settings = try PostgresSettings(url: "postgres://profile:secret@db.internal:6543/konto_profile?sslmode=\(mode.rawValue)")
        settings.connectTimeout = .milliseconds(1500)
        let connection = try settings.connectionConfiguration()
        #expect(connection.host == "db.internal")
        #expect(connection.port == 6543)
        #expect(connection.username == "profile")
        #expect(connection.password == "secret")
        #expect(connection.database == "konto_profile")
        #expect(connection.options.connectTimeout == .milliseconds(1500))
        #expect(connection.tls.isAllowed == (mode != .disable))
        #expect(connection.tls.isEnforced == (mode == .require))
    }

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
        "postgres://user:secret@localhost/db?sslmode=verify-full",
        "postgres://user:secret@localhost/db?sslmod=require",
    ])
    func refused(url: String) {
        let error = #expect(throws: PostgresSettingsError.self) {
            try PostgresSettings(url: url)
        }
        #expect(error?.description.contains("secret") == false)
        #expect(error?.description.hasPrefix(PostgresSettingsError.code) == true)
    }
}
