import KontoPostgres
import KontoRuntime
import Testing

@Suite("Service environment: a service's database")
struct ServiceEnvironmentDatabaseTests {
    @Test("unset: memory; set: the URL's server with a pool of 20, or of the service's connections variable")
    func database() throws {
        #expect(try ServiceEnvironment([:]).database(url: "KONTO_IDENTITY_DATABASE_URL", connections: "KONTO_IDENTITY_DATABASE_CONNECTIONS") == nil)
        let url = "postgres://konto:secret@db.example.org:6432/konto"
        let plain = try #require(try ServiceEnvironment(["KONTO_IDENTITY_DATABASE_URL": url]).database(url: "KONTO_IDENTITY_DATABASE_URL", connections: "KONTO_IDENTITY_DATABASE_CONNECTIONS"))
        #expect(plain.host == "db.example.org" && plain.port == 6432 && plain.database == "konto")
        #expect(plain.maximumConnections == 20)
        let sized = try #require(try ServiceEnvironment([
            "KONTO_PROFILE_DATABASE_URL": url, "KONTO_PROFILE_DATABASE_CONNECTIONS": "5",
            // Another service's size is not this one's.
            "KONTO_IDENTITY_DATABASE_CONNECTIONS": "7",
        ]).database(url: "KONTO_PROFILE_DATABASE_URL", connections: "KONTO_PROFILE_DATABASE_CONNECTIONS"))
        #expect(sized.maximumConnections == 5)
    }

    @Test("a bad URL or pool size is refused by name, never with the password", arguments: [
        (["KONTO_IDENTITY_DATABASE_URL": "mysql://konto:secret@db/konto"], "KONTO_IDENTITY_DATABASE_URL"),
        (["KONTO_IDENTITY_DATABASE_URL": "postgres://konto:secret@db/konto", "KONTO_IDENTITY_DATABASE_CONNECTIONS": "0"], "KONTO_IDENTITY_DATABASE_CONNECTIONS"),
        (["KONTO_IDENTITY_DATABASE_URL": "postgres://konto:secret@db/konto", "KONTO_IDENTITY_DATABASE_CONNECTIONS": "1001"], "KONTO_IDENTITY_DATABASE_CONNECTIONS"),
        (["KONTO_IDENTITY_DATABASE_URL": "postgres://konto:secret@db/konto", "KONTO_IDENTITY_DATABASE_CONNECTIONS": "many"], "KONTO_IDENTITY_DATABASE_CONNECTIONS"),
    ])
    func refused(variables: [String: String], variable: String) {
        let error = #expect(throws: ServiceEnvironmentError.self) { try ServiceEnvironment(variables).database(url: "KONTO_IDENTITY_DATABASE_URL", connections: "KONTO_IDENTITY_DATABASE_CONNECTIONS") }
        #expect(error?.variable == variable)
        #expect(error?.description.contains("secret") == false)
    }
}
