import Foundation
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import Logging
import PostgresNIO
import ProfileService
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("PostgreSQL profile storage")
struct PostgresProfileStorageTests {
    static let awkwardStrings: [String] = [
        #"it's "quoted""#,
        #"back\slash \\ and \"escaped\" \u0041 \n literally"#,
        "'; DROP TABLE profile_accounts; --",
        "\"); DELETE FROM profile_accounts WHERE (\"1\"=\"1",
        "$1 $2 ::jsonb %s {} []",
        "emoji 👩🏽‍💻 🇨🇭 and a zero-width joiner\u{200D}",
        "RTL: שלום עולם, مرحبا بالعالم",
        "combining: e\u{0301} vs \u{00E9}, a\u{0308}\u{0323}",
        "control: tab\t newline\n return\r bell\u{07} delete\u{7F}",
        "lone high plane: \u{10FFFF} \u{1F600}",
        "",
    ]

    /// Runs `body` with a store over a fresh, migrated database and a client for looking at the rows directly.
    private func withStore(_ body: (ProfileStore, PostgresClient) async throws -> Void) async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await PostgresStorageFixture.withStorage(database) { storage, client in
                try await storage.migrate()
                let store = ProfileStore(storage: storage, configuration: try AccountConfigurationChoice.keepingUnknownKeys.make(), options: Fixtures.options, logger: Fixtures.logger)
                try await body(store, client)
            }
        }
    }

    @Test("quotes, backslashes, SQL and Unicode round-trip byte for byte, as values, keys and accountIds")
    func awkwardTextRoundTrips() async throws {
        try await withStore { store, client in
            for (index, text) in Self.awkwardStrings.enumerated() {
                let accountId = "acct \(index) " + text
                var details = Fixtures.details()
                details[identifier: "note"] = .string(text)
                details[identifier: "nested"] = .object([text: .array([.string(text)])])
                _ = try await store.create(accountId: accountId, details: details)
                let loaded = try await store.load(accountId: accountId).details
                let note = try #require(loaded[identifier: "note"]?.stringValue)
                #expect(Array(note.utf8) == Array(text.utf8))
                #expect(loaded[identifier: "nested"] == details[identifier: "nested"])
                let loadedAccountId: String = try #require(loaded[\.accountId])
                #expect(Array(loadedAccountId.utf8) == Array(accountId.utf8))

                // What PostgreSQL holds is the text itself, not an escaped or normalised form of it.
                let rows = try await client.query("SELECT details->>'note' FROM profile.accounts WHERE account_id = \(accountId)")
                var stored: [String] = []
                for try await value in rows.decode(String.self) { stored.append(value) }
                #expect(stored.count == 1)
                let storedText: String = stored.first ?? ""
                #expect(Array(storedText.utf8) == Array(text.utf8))
            }
            // The table is intact and holds exactly the accounts created.
            let count = try await client.query("SELECT count(*) FROM profile.accounts")
            for try await value in count.decode(Int64.self) {
                #expect(value == Int64(Self.awkwardStrings.count))
            }
        }
    }

    @Test("numbers keep their kind and value through jsonb")
    func numbersRoundTrip() async throws {
        try await withStore { store, _ in
            var numbers: [String: AccountValue] = [:]
            numbers["max"] = AccountValue.integer(Int64.max)
            numbers["min"] = AccountValue.integer(Int64.min)
            numbers["zero"] = AccountValue.integer(0)
            numbers["fraction"] = AccountValue.double(0.1)
            numbers["tiny"] = AccountValue.double(Double.leastNonzeroMagnitude)
            numbers["huge"] = AccountValue.double(Double.greatestFiniteMagnitude)
            numbers["negative"] = AccountValue.double(-2.5)
            var details = Fixtures.details()
            for (key, value) in numbers { details[identifier: key] = value }
            _ = try await store.create(accountId: "numbers", details: details)
            let loaded = try await store.load(accountId: "numbers", keys: Array(numbers.keys)).details
            #expect(loaded.storedValues == numbers)
            #expect(loaded[identifier: "max"]?.kindName == "integer")
        }
    }

    @Test("a record PostgreSQL holds but the service cannot read fails with profile.storageFailure")
    func unreadableRecord() async throws {
        try await withStore { store, client in
            // Valid jsonb, but a number no Swift type holds.
            try await client.query("INSERT INTO profile.accounts (account_id, version, details) VALUES ('odd', 1, '{\"n\": 1e400}'::jsonb)")
            let error = await #expect(throws: ServiceError.self) {
                try await store.load(accountId: "odd")
            }
            #expect(error?.code == .profileStorageFailure)
            #expect(error?.isRetryable == false)
        }
    }

    /// The storage's connections to the database: every client backend but the inspecting client's own.
    private static func storageBackends(_ inspector: PostgresClient) async throws -> Set<Int32> {
        let rows = try await inspector.query("""
            SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            """)
        var pids: Set<Int32> = []
        for try await pid in rows.decode(Int32.self) { pids.insert(pid) }
        return pids
    }

    @Test("when the server ends the pool's connections, loads fail fast as unavailable, then serve from fresh ones")
    func connectionsEnded() async throws {
        try await withStore { store, client in
            let created = try await store.create(accountId: "a1", details: Fixtures.details())
            // Concurrent loads, so more than one loop's batches and connection are in use.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let loaded = try await store.load(accountId: "a1")
                        #expect(loaded == created)
                    }
                }
                try await group.waitForAll()
            }
            let ended = try await Self.storageBackends(client)
            try #require(!ended.isEmpty)
            for pid in ended {
                try await client.query("SELECT pg_terminate_backend(\(pid))")
            }
            let clock = ContinuousClock()
            var served = 0
            for _ in 0..<200 where served < 8 {
                let start = clock.now
                do throws(ServiceError) {
                    let loaded = try await store.load(accountId: "a1")
                    #expect(loaded == created)
                    served += 1
                } catch {
                    #expect(error.code == .profileStorageUnavailable)
                    // A closed connection is noticed, not waited out until the operation timeout.
                    #expect(clock.now - start < Fixtures.options.operationTimeout)
                }
            }
            #expect(served == 8)
        }
    }

    /// A `/proc` file read to its end (they report size 0, and one read returns a page at most).
    private static func procFile(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return (try? handle.readToEnd()).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The queue columns of `pid`'s TCP sockets, for a failure message.
    private static func socketQueues(pid: Int32) -> String {
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return "no fds" }
        var inodes: Set<Substring> = []
        for descriptor in descriptors {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)"),
                  target.hasPrefix("socket:[") else { continue }
            inodes.insert(target.dropFirst("socket:[".count).dropLast())
        }
        var found: [String] = []
        for table in ["tcp", "tcp6"] {
            guard let text = Self.procFile("/proc/\(pid)/net/\(table)") else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                if fields.count > 9, inodes.contains(fields[9]) { found.append(fields[1...4].joined(separator: " ")) }
            }
        }
        return "sockets \(inodes.count): \(found)"
    }

    /// Whether a TCP socket of process `pid` holds received bytes it has not read (Linux `/proc`).
    private static func hasUnreadInput(pid: Int32) -> Bool {
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return false }
        var inodes: Set<Substring> = []
        for descriptor in descriptors {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(descriptor)"),
                  target.hasPrefix("socket:[") else { continue }
            inodes.insert(target.dropFirst("socket:[".count).dropLast())
        }
        for table in ["tcp", "tcp6"] {
            guard let text = Self.procFile("/proc/\(pid)/net/\(table)") else { continue }
            // sl local rem st tx_queue:rx_queue tr:when retrnsmt uid timeout inode …
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, inodes.contains(fields[9]),
                      let queues = fields[4].split(separator: ":").last, let unread = Int(queues, radix: 16) else { continue }
                if unread > 0 { return true }
            }
        }
        return false
    }

    @Test(
        "a backend that stops answering holds up reads only until their deadline: its connection is replaced and reads go on",
        .enabled(if: ProcessInfo.processInfo.environment["KONTO_TEST_DATABASE_URL"] == nil, "stops a backend process of the local test cluster")
    )
    func stalledBackend() async throws {
        try await TestDatabase.withFreshDatabase { database in
            // One connection, so the read behind the stuck one can only be served by its replacement.
            try await PostgresStorageFixture.withStorage(database, maximumConnections: 1) { storage, inspector in
                try await storage.migrate()
                // Generous: the stuck query must reach its backend before this passes, on a loaded machine too.
                let timeout = Duration.seconds(6)
                let store = ProfileStore(
                    storage: storage,
                    configuration: try AccountConfigurationChoice.standard.make(),
                    options: ProfileStoreOptions(operationTimeout: timeout),
                    logger: Fixtures.logger
                )
                let created = try await store.create(accountId: "a1", details: Fixtures.details())
                #expect(try await store.load(accountId: "a1") == created)

                // The storage's connection stops answering, without closing: a half-open connection as the service
                // sees it.
                let stopped = try await Self.storageBackends(inspector)
                try #require(stopped.count == 1)
                for pid in stopped {
                    try #require(kill(pid, SIGSTOP) == 0)
                }
                // Resumed whatever happens, or the database cannot be dropped nor the cluster stopped.
                defer {
                    for pid in stopped { kill(pid, SIGCONT) }
                }

                let clock = ContinuousClock()
                let start = clock.now
                let stuck = Task { try await store.load(accountId: "a1") }
                // This read must come after the stuck one's query reached the stopped backend (its bytes wait
                // unread in the backend's socket), so it waits behind it instead of sharing it or taking the
                // connection first; its deadline is far enough to outlast the stuck batch.
                let polling = clock.now + timeout
                while try await storage.readBatchesInFlight() == 0 || !Self.hasUnreadInput(pid: stopped.first!) {
                    if clock.now >= polling {
                        let batches = try await storage.readBatchesInFlight()
                        let backends = try await Self.storageBackends(inspector)
                        Issue.record("the stuck load's query never reached the backend (batches out: \(batches), backends: \(backends), stopped: \(stopped), \(Self.socketQueues(pid: stopped.first!)))")
                        return
                    }
                    try await Task.sleep(for: .milliseconds(5))
                }
                let queued = Task { try await storage.fetch(accountId: "a1", keys: nil, timeout: .seconds(20)) }

                let error = await #expect(throws: ServiceError.self) { try await stuck.value }
                #expect(error?.code == .profileStorageUnavailable)
                #expect(clock.now - start < timeout + .seconds(2))
                // The read behind the stuck batch goes out when that batch is abandoned, on a fresh connection, and
                // is answered soon after, not at its own deadline.
                #expect(try await queued.value?.version == created.version)
                #expect(clock.now - start < timeout + .seconds(5))
                for _ in 0..<20 {
                    let begun = clock.now
                    #expect(try await store.load(accountId: "a1") == created)
                    #expect(clock.now - begun < timeout)
                }
                // The storage reads through a connection other than the stopped one (which, stopped, cannot notice
                // that its client went away, so it is still listed).
                let now = try await Self.storageBackends(inspector)
                #expect(!now.subtracting(stopped).isEmpty)
            }
        }
    }

    @Test("a database migrated by the release before namespaces is adopted: its rows move to profile.accounts, its record to profile's")
    func legacyDatabaseAdopted() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await PostgresStorageFixture.withStorage(database) { storage, client in
                // What the previous release's migrator and migration 1 left in the database.
                try await client.query("""
                    CREATE TABLE konto_schema_migrations (
                        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                    """)
                try await client.query("INSERT INTO konto_schema_migrations (version, name, applied_at) VALUES (1, 'create profile_accounts', '2026-01-02T03:04:05Z')")
                try await client.query("""
                    CREATE TABLE profile_accounts (
                        account_id text PRIMARY KEY,
                        version bigint NOT NULL CHECK (version > 0),
                        details jsonb NOT NULL CHECK (jsonb_typeof(details) = 'object'),
                        created_at timestamptz NOT NULL DEFAULT now(),
                        updated_at timestamptz NOT NULL DEFAULT now())
                    """)
                try await client.query("""
                    INSERT INTO profile_accounts (account_id, version, details)
                    VALUES ('old', 3, '{"accountId": "old", "name": {"givenName": "Ada", "familyName": "Lovelace"}}'::jsonb)
                    """)

                try await storage.migrate()
                try await storage.migrate()
                let store = ProfileStore(storage: storage, configuration: try AccountConfigurationChoice.keepingUnknownKeys.make(), options: Fixtures.options, logger: Fixtures.logger)
                try await store.checkHealth()
                let loaded = try await store.load(accountId: "old")
                #expect(loaded.version == 3)
                #expect(loaded.details[identifier: "name"] == .object(["givenName": .string("Ada"), "familyName": .string("Lovelace")]))

                let applied = try await PostgresMigrator(namespace: ProfileMigrations.namespace, migrations: ProfileMigrations.all)
                    .appliedMigrations(client: client, logger: Fixtures.logger)
                // The legacy record is adopted as version 1; the later migrations run on top.
                #expect(applied.map(\.version) == ProfileMigrations.all.map(\.version))
                #expect(applied.map(\.name) == ProfileMigrations.all.map(\.name))
                #expect(applied.first?.appliedAt == Date(timeIntervalSince1970: 1_767_323_045))
                // Nothing of Profile is left in public: neither the table nor the shared record.
                let publicTables = try await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
                var left: [String] = []
                for try await name in publicTables.decode(String.self) { left.append(name) }
                #expect(left.isEmpty)
            }
        }
    }

    @Test("migrating twice is harmless, and health needs the table")
    func migrationAndHealth() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await PostgresStorageFixture.withStorage(database) { storage, client in
                let store = ProfileStore(storage: storage, configuration: try AccountConfigurationChoice.standard.make(), options: Fixtures.options, logger: Fixtures.logger)
                // Before the migration the database answers, but the service cannot work.
                let error = await #expect(throws: ServiceError.self) { try await store.checkHealth() }
                #expect(error?.code == .profileStorageFailure)

                try await storage.migrate()
                try await storage.migrate()
                try await store.checkHealth()
                var columns: [String] = []
                let rows = try await client.query(
                    "SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_schema = 'profile' AND table_name = 'accounts' ORDER BY ordinal_position"
                )
                for try await column in rows.decode(String.self) { columns.append(column) }
                #expect(columns == [
                    "account_id text", "version bigint", "details jsonb",
                    "created_at timestamp with time zone", "updated_at timestamp with time zone",
                ])
            }
        }
    }
}
