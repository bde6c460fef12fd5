import KontoContracts
import KontoModel
import KontoTesting
import Logging
import PostgresNIO
import ProfileService
import Testing

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
                let rows = try await client.query("SELECT details->>'note' FROM profile_accounts WHERE account_id = \(accountId)")
                var stored: [String] = []
                for try await value in rows.decode(String.self) { stored.append(value) }
                #expect(stored.count == 1)
                let storedText: String = stored.first ?? ""
                #expect(Array(storedText.utf8) == Array(text.utf8))
            }
            // The table is intact and holds exactly the accounts created.
            let count = try await client.query("SELECT count(*) FROM profile_accounts")
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
            try await client.query("INSERT INTO profile_accounts (account_id, version, details) VALUES ('odd', 1, '{\"n\": 1e400}'::jsonb)")
            let error = await #expect(throws: ProfileError.self) {
                try await store.load(accountId: "odd")
            }
            #expect(error?.code == .storageFailure)
            #expect(error?.isRetryable == false)
        }
    }

    @Test("when the server ends the read connections, loads fail fast as unavailable, then serve from fresh ones")
    func readConnectionsEnded() async throws {
        try await withStore { store, client in
            let created = try await store.create(accountId: "a1", details: Fixtures.details())
            // Concurrent loads, so more than one loop's read connection is open and prepared.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let loaded = try await store.load(accountId: "a1")
                        #expect(loaded == created)
                    }
                }
                try await group.waitForAll()
            }
            try await client.query("""
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                """)
            let clock = ContinuousClock()
            var served = 0
            for _ in 0..<200 where served < 8 {
                let start = clock.now
                do throws(ProfileError) {
                    let loaded = try await store.load(accountId: "a1")
                    #expect(loaded == created)
                    served += 1
                } catch {
                    #expect(error.code == .storageUnavailable)
                    // A closed connection is noticed, not waited out until the operation timeout.
                    #expect(clock.now - start < Fixtures.options.operationTimeout)
                }
            }
            #expect(served == 8)
        }
    }

    @Test("migrating twice is harmless, and health needs the table")
    func migrationAndHealth() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await PostgresStorageFixture.withStorage(database) { storage, client in
                let store = ProfileStore(storage: storage, configuration: try AccountConfigurationChoice.standard.make(), options: Fixtures.options, logger: Fixtures.logger)
                // Before the migration the database answers, but the service cannot work.
                let error = await #expect(throws: ProfileError.self) { try await store.checkHealth() }
                #expect(error?.code == .storageFailure)

                try await storage.migrate()
                try await storage.migrate()
                try await store.checkHealth()
                var columns: [String] = []
                let rows = try await client.query(
                    "SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_name = 'profile_accounts' ORDER BY ordinal_position"
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
