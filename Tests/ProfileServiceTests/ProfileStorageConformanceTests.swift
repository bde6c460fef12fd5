import KontoEvents
import KontoModel
import ProfileService
import Testing

/// What every ``ProfileStorage`` must do, run against each implementation.
@Suite("Profile storage conformance")
struct ProfileStorageConformanceTests {
    let values: [String: AccountValue] = [
        "userId": .string("ada@example.org"),
        "phoneNumbers": .array([.string("+44 20 7946 0000")]),
        "name": .object(["givenName": .string("Ada")]),
        "shoeSize": .double(38.5),
        "visits": .integer(Int64.max),
        "verified": .bool(true),
    ]

    @Test("insert starts at version 1; fetch returns what was inserted", arguments: StorageKind.allCases)
    func insertAndFetch(kind: StorageKind) async throws {
        try await kind.withStorage { storage in
            let missing = try await storage.fetch(accountId: "a1")
            #expect(missing == nil)
            #expect(try await storage.insert(accountId: "a1", values: values) == 1)
            #expect(try await storage.fetch(accountId: "a1") == StoredProfile(values: values, version: 1))
            #expect(try await storage.insert(accountId: "a2", values: [:]) == 1)
            #expect(try await storage.fetch(accountId: "a2") == StoredProfile(values: [:], version: 1))
        }
    }

    @Test("a bounded fetch returns the whole record, or with keys only the values of those keys it has", arguments: StorageKind.allCases)
    func boundedFetchWithKeys(kind: StorageKind) async throws {
        try await kind.withStorage { storage in
            _ = try await storage.insert(accountId: "a1", values: values)
            #expect(try await storage.fetch(accountId: "a1", keys: nil, timeout: .seconds(10)) == StoredProfile(values: values, version: 1))
            let some = try await storage.fetch(accountId: "a1", keys: ["name", "visits", "absent"], timeout: .seconds(10))
            #expect(some == StoredProfile(values: ["name": values["name"]!, "visits": values["visits"]!], version: 1))
            #expect(try await storage.fetch(accountId: "a1", keys: [], timeout: .seconds(10)) == StoredProfile(values: [:], version: 1))
            #expect(try await storage.fetch(accountId: "missing", keys: ["name"], timeout: .seconds(10)) == nil)
        }
    }

    @Test("a second insert for an account fails with alreadyExists and changes nothing", arguments: StorageKind.allCases)
    func duplicateInsert(kind: StorageKind) async throws {
        try await kind.withStorage { storage in
            _ = try await storage.insert(accountId: "a1", values: values)
            let error = await #expect(throws: ProfileStorageError.self) {
                try await storage.insert(accountId: "a1", values: [:])
            }
            #expect(error?.code == .conflict)
            #expect(error?.isRetryable == false)
            #expect(try await storage.fetch(accountId: "a1") == StoredProfile(values: values, version: 1))
        }
    }

    @Test("replace is a compare-and-set on the version", arguments: StorageKind.allCases)
    func compareAndSet(kind: StorageKind) async throws {
        try await kind.withStorage { storage in
            _ = try await storage.insert(accountId: "a1", values: values)
            let changed: [String: AccountValue] = ["userId": .string("grace@example.org")]
            #expect(try await storage.replace(accountId: "a1", values: changed, ifVersion: 1) == 2)
            #expect(try await storage.replace(accountId: "a1", values: values, ifVersion: 1) == nil)
            #expect(try await storage.fetch(accountId: "a1") == StoredProfile(values: changed, version: 2))
            #expect(try await storage.replace(accountId: "a1", values: values, ifVersion: 2) == 3)
            #expect(try await storage.replace(accountId: "missing", values: values, ifVersion: 1) == nil)
            #expect(try await storage.fetch(accountId: "missing") == nil)
        }
    }

    @Test("a replace writes its events to the outbox with the change, and none when the compare-and-set fails", arguments: StorageKind.allCases)
    func outboxWithReplace(kind: StorageKind) async throws {
        try await kind.withStorage { storage in
            _ = try await storage.insert(accountId: "a1", values: values)
            let first = AccountEvent(accountId: "a1", kind: .detailsChanged(keys: ["biography"]))
            let lost = AccountEvent(accountId: "a1", kind: .passwordChanged)
            #expect(try await storage.replace(accountId: "a1", values: values, ifVersion: 1, events: [first]) == 2)
            #expect(try await storage.replace(accountId: "a1", values: values, ifVersion: 1, events: [lost]) == nil)
            #expect(try await storage.replace(accountId: "missing", values: values, ifVersion: 1, events: [lost]) == nil)
            #expect(try await storage.pendingEvents(limit: 10) == [first])
            // Drained once published; a publish that fails leaves them.
            struct Down: Error {}
            await #expect(throws: Down.self) { _ = try await storage.drainOutbox(limit: 10) { _ in throw Down() } }
            #expect(try await storage.pendingEvents(limit: 10) == [first])
            let published = PublishedEvents()
            #expect(try await storage.drainOutbox(limit: 10) { published.append($0) } == 1)
            #expect(published.all == [first])
            #expect(try await storage.pendingEvents(limit: 10).isEmpty)
        }
    }

    @Test("modifying a profile writes a thin detailsChanged: the keys set or removed, no values", arguments: StorageKind.allCases)
    func detailsChanged(kind: StorageKind) async throws {
        try await kind.withStorage { storage in
            let store = ProfileStore(storage: storage, configuration: .default, logger: Fixtures.logger)
            _ = try await store.create(accountId: "a1", details: AccountDetails(values: ["userId": .string("ada@example.org"), "name": values["name"]!]))
            let modifications = AccountModifications(set: AccountDetails(values: ["dateOfBirth": .string("1815-12-10")]))
            _ = try await store.modify(accountId: "a1", modifications: modifications)
            // A modification that changes nothing writes no event.
            _ = try await store.modify(accountId: "a1", modifications: modifications)
            let events = try await storage.pendingEvents(limit: 10)
            #expect(events.count == 1)
            #expect(events.first?.kind == .detailsChanged(keys: ["dateOfBirth"]))
            #expect(events.first?.accountId == "a1")
            #expect(!"\(events)".contains("1815"))
        }
    }

    @Test("of two replaces at the same version exactly one succeeds", arguments: StorageKind.allCases)
    func racingReplaces(kind: StorageKind) async throws {
        try await kind.withStorage { storage in
            _ = try await storage.insert(accountId: "a1", values: [:])
            let results = try await withThrowingTaskGroup(of: Int64?.self) { group in
                for index in 0..<10 {
                    group.addTask {
                        try await storage.replace(accountId: "a1", values: ["writer": .integer(Int64(index))], ifVersion: 1)
                    }
                }
                return try await group.reduce(into: [Int64?]()) { $0.append($1) }
            }
            #expect(results.compactMap { $0 } == [2])
            #expect(try await storage.fetch(accountId: "a1")?.version == 2)
        }
    }

    @Test("delete removes the record once; later deletes report nothing to remove", arguments: StorageKind.allCases)
    func delete(kind: StorageKind) async throws {
        try await kind.withStorage { storage in
            _ = try await storage.insert(accountId: "a1", values: values)
            _ = try await storage.insert(accountId: "a2", values: values)
            #expect(try await storage.delete(accountId: "a1"))
            #expect(try await storage.delete(accountId: "a1") == false)
            #expect(try await storage.fetch(accountId: "a1") == nil)
            #expect(try await storage.fetch(accountId: "a2")?.version == 1)
            // After a delete, the account may be created afresh.
            #expect(try await storage.insert(accountId: "a1", values: [:]) == 1)
        }
    }

    @Test("a working storage reports itself healthy", arguments: StorageKind.allCases)
    func health(kind: StorageKind) async throws {
        try await kind.withStorage { storage in
            try await storage.checkHealth()
        }
    }
}

import Synchronization

private final class PublishedEvents: Sendable {
    private let events = Mutex<[AccountEvent]>([])
    func append(_ batch: [AccountEvent]) { events.withLock { $0 += batch } }
    var all: [AccountEvent] { events.withLock { $0 } }
}
