import Foundation
import KontoModel
import KontoTestSupport
@testable import NotificationService
import Synchronization
import Testing

/// Replicas of Notifications share one database: what one stores wakes the others' tails and consumers at once
/// (``NotificationStorage/watchPublished(_:)``, migration 7's triggers), not at their next poll.
@Suite("Notifications: replicas wake each other")
struct PostgresPublishedWatchTests {
    static let t0 = Timestamp(milliseconds: 1_800_000_000_000)

    @Test("events stored by one replica, and deliveries replayed by it, wake another replica's watch; cancelling ends the watch")
    func wakesAcrossReplicas() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await NotificationStorageKind.withPostgres(database) { first in
                try await first.migrate()
                try await NotificationStorageKind.withPostgres(database) { second in
                    let wakes = Atomic<Int>(0)
                    let watching = Task { try await second.watchPublished { wakes.add(1, ordering: .relaxed) } }
                    // The first wake says it watches.
                    try await Self.waitUntil("the watch started") { wakes.load(ordering: .relaxed) >= 1 }
                    #expect(try await first.ensureGroup("g", types: nil, at: Self.t0) == .created)
                    _ = try await first.append([AccountEvent(time: Self.t0.date, accountId: "a1", kind: .passwordChanged)], at: Self.t0)
                    try await Self.waitUntil("a wake for the stored event") { wakes.load(ordering: .relaxed) >= 2 }
                    // Delivered and acknowledged; then a replay inserts a delivery only.
                    let claimed = try await first.claim(group: "g", limit: 10, at: Self.t0, visibility: .seconds(30), maxAttempts: 5)
                    #expect(try await first.acknowledge(claimed.map(\.claim)) == 1)
                    let before = wakes.load(ordering: .relaxed)
                    #expect(try await first.replay(group: "g", from: Self.t0, at: Self.t0) == 1)
                    try await Self.waitUntil("a wake for the replayed delivery") { wakes.load(ordering: .relaxed) > before }
                    watching.cancel()
                    #expect(await Self.ends(watching), "a cancelled watch returns")
                }
            }
        }
    }

    @Test("a storage only this process uses wakes once and waits until cancelled")
    func inMemoryWaits() async throws {
        let storage = InMemoryNotificationStorage()
        let wakes = Atomic<Int>(0)
        let watching = Task { try await storage.watchPublished { wakes.add(1, ordering: .relaxed) } }
        try await Self.waitUntil("the watch started") { wakes.load(ordering: .relaxed) == 1 }
        watching.cancel()
        #expect(await Self.ends(watching))
        #expect(wakes.load(ordering: .relaxed) == 1)
    }

    /// Polls `condition` for at most 10 s.
    static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TestFailure("not within 10 s: \(what)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Whether `task` ends within 10 s.
    static func ends(_ task: Task<Void, any Error>) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { _ = await task.result; return true }
            group.addTask { try? await Task.sleep(for: .seconds(10)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
