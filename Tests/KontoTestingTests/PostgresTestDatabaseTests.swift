import Foundation
import Testing

@testable import KontoTestSupport

@Suite("Database settings and binaries")
struct PostgresTestDatabaseTests {
    @Test("a URL parses into its parts, with percent-encoded credentials")
    func parsesURL() throws {
        let database = try PostgresTestDatabase(url: "postgres://konto:p%40ss%3Aword@db.local:6543/profile")
        #expect(database.host == "db.local")
        #expect(database.port == 6543)
        #expect(database.username == "konto")
        #expect(database.password == "p@ss:word")
        #expect(database.database == "profile")
    }

    @Test("defaults: port 5432, database postgres")
    func defaults() throws {
        let database = try PostgresTestDatabase(url: "postgresql://me@localhost")
        #expect(database.port == 5432)
        #expect(database.database == "postgres")
        #expect(database.password == nil)
    }

    @Test("a URL round-trips through its string form")
    func roundTrip() throws {
        let original = PostgresTestDatabase(host: "127.0.0.1", port: 5999, username: "u", password: "a/b@c", database: "d")
        let parsed = try PostgresTestDatabase(url: original.url)
        #expect(parsed.password == "a/b@c")
        #expect(parsed.database == "d")
        #expect(parsed.port == 5999)
    }

    @Test("the description never shows the password")
    func descriptionHidesPassword() {
        let database = PostgresTestDatabase(host: "h", port: 1, username: "u", password: "hunter2-secret", database: "d")
        #expect(!"\(database)".contains("hunter2-secret"))
        #expect(!String(reflecting: database).contains("hunter2-secret"))
        #expect(database.url.contains("hunter2-secret"))
    }

    @Test("not a postgres URL is refused with a clear error", arguments: [
        "mysql://u@h/d", "not a url", "postgres:///nohost", "",
    ])
    func refusesBadURL(_ url: String) {
        #expect {
            _ = try PostgresTestDatabase(url: url)
        } throws: { error in
            (error as? KontoTestingError)?.code == .invalidDatabaseURL
        }
    }

    @Test("missing server programs are reported, not crashed on")
    func missingBinaries() throws {
        let empty = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect {
            _ = try PostgresBinaries.locate(environment: ["PATH": empty.path], debianRoot: empty.path)
        } throws: { error in
            (error as? KontoTestingError)?.code == .binariesNotFound
        }
    }

    @Test("Debian's directories are searched, newest major version first")
    func debianNewestFirst() throws {
        let root = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        for version in ["9", "15", "14"] {
            try Self.fakeServerPrograms(in: root.appendingPathComponent("\(version)/bin"))
        }
        let found = try PostgresBinaries.locate(environment: ["PATH": ""], debianRoot: root.path)
        #expect(found.directory.path == root.appendingPathComponent("15/bin").path)
    }

    @Test("KONTO_PG_BINDIR wins over PATH")
    func configuredDirectoryWins() throws {
        let fake = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: fake) }
        try Self.fakeServerPrograms(in: fake)
        let found = try PostgresBinaries.locate(environment: ["PATH": "/usr/bin", "KONTO_PG_BINDIR": fake.path])
        #expect(found.directory.path == fake.path)
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("konto-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func fakeServerPrograms(in directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for program in ["initdb", "pg_ctl"] {
            let path = directory.appendingPathComponent(program).path
            _ = FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        }
    }
}
