import Foundation
import Logging
import PostgresNIO
import Testing

@testable import KontoTestSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite("A real PostgreSQL for tests")
struct TemporaryPostgresClusterTests {
    @Test("a fresh database takes a table, an insert and a read back")
    func createInsertReadBack() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await TestDatabase.withClient(database) { client in
                try await client.query("CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL)")
                let body = "it's a \"quoted\" ✓ note; DROP TABLE notes; --"
                try await client.query("INSERT INTO notes (id, body) VALUES (\(1), \(body))")
                let rows = try await client.query("SELECT id, body FROM notes WHERE id = \(1)")
                var read: [(Int, String)] = []
                for try await (id, text) in rows.decode((Int, String).self) {
                    read.append((id, text))
                }
                #expect(read.count == 1)
                #expect(read.first?.0 == 1)
                #expect(read.first?.1 == body)
            }
        }
    }

    @Test("each test gets its own empty database")
    func databasesAreIsolated() async throws {
        try await TestDatabase.withFreshDatabase { first in
            try await TestDatabase.withFreshDatabase { second in
                #expect(first.database != second.database)
                _ = try await TestDatabase.withClient(first) { client in
                    try await client.query("CREATE TABLE only_here (id integer)")
                }
                try await TestDatabase.withClient(second) { client in
                    let rows = try await client.query("SELECT count(*)::int FROM pg_tables WHERE tablename = \("only_here")")
                    var count = -1
                    for try await value in rows.decode(Int.self) { count = value }
                    #expect(count == 0)
                }
            }
        }
    }

    @Test("a cluster stops, starts again with its data, and leaves no process behind")
    func lifecycleLeavesNoProcess() async throws {
        let cluster = try await TemporaryPostgresCluster.start()
        let dataDirectory = cluster.dataDirectory
        do {
            let database = try await TestDatabase.createDatabase(on: cluster.maintenanceDatabase, logger: Logger(label: "test"))
            try await TestDatabase.withClient(database) { client in
                try await client.query("CREATE TABLE kept (value text)")
                try await client.query("INSERT INTO kept VALUES (\("survives a restart"))")
            }
            let postmaster = try #require(cluster.postmasterPID)
            #expect(ProcessExit.isRunning(postmaster))

            try await cluster.stop()
            #expect(!cluster.isRunning)
            #expect(!ProcessExit.isRunning(postmaster))
            #expect(Self.processesMentioning(dataDirectory).isEmpty)

            try await cluster.start()
            try await TestDatabase.withClient(database) { client in
                var values: [String] = []
                for try await value in try await client.query("SELECT value FROM kept").decode(String.self) {
                    values.append(value)
                }
                #expect(values == ["survives a restart"])
            }
        } catch {
            try? await cluster.destroy()
            throw error
        }
        try await cluster.destroy()
        #expect(Self.processesMentioning(dataDirectory).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dataDirectory))
        // A second destroy is harmless.
        try await cluster.destroy()
    }

    @Test("when the owning process dies without cleaning up, the watchdog stops the server and removes it")
    func watchdogCleansUpAfterACrash() async throws {
        // A stand-in owner we can kill as a crash would; reaped at once so it is not left a zombie.
        let owner = try ChildProcess.launchDetached("/bin/sleep", ["600"])
        let cluster = try await TemporaryPostgresCluster.start(logger: Logger(label: "test"), watching: owner)
        let dataDirectory = cluster.dataDirectory
        let postmaster = try #require(cluster.postmasterPID)
        let watchdog = try #require(cluster.watchdogPID)
        #expect(ProcessExit.isRunning(postmaster))

        kill(owner, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(owner, &status, 0)

        let watchdogEnded = await ProcessExit.wait(for: watchdog, timeout: .seconds(60))
        _ = waitpid(watchdog, &status, 0)
        #expect(watchdogEnded)
        #expect(!ProcessExit.isRunning(postmaster))
        #expect(Self.processesMentioning(dataDirectory).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dataDirectory))
    }

    @Test("a wrong password is refused: the server really authenticates")
    func wrongPasswordIsRefused() async throws {
        try await TestDatabase.withFreshDatabase { database in
            var wrong = database
            wrong.password = "not-the-password"
            await #expect(throws: PSQLError.self) {
                let connection = try await PostgresConnection.connect(
                    configuration: wrong.connectionConfiguration,
                    id: 7,
                    logger: Logger(label: "test")
                )
                try await connection.close()
            }
        }
    }

    // MARK: Process inspection through /proc, as `pgrep -f` does.

    static func processesMentioning(_ text: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.filter { $0.allSatisfy(\.isNumber) }.filter { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self).contains(text)
        }
    }
}
