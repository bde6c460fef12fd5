import Foundation
import KontoModel
import KontoTestSupport
import PostgresNIO
@testable import NotificationService
import Testing

/// What every ``NotificationStorage`` must do, checked on memory and PostgreSQL alike.
@Suite("Notification storage conformance")
struct NotificationStorageConformanceTests {
    static let t0 = Timestamp(milliseconds: 1_800_000_000_000)
    static let visibility = Duration.seconds(30)

    static func event(_ accountId: String, _ kind: AccountEvent.Kind = .passwordChanged, at time: Timestamp = t0) -> AccountEvent {
        AccountEvent(time: time.date, accountId: accountId, kind: kind)
    }

    static func claim(_ storage: any NotificationStorage, _ group: String = "g", limit: Int = 10, at time: Timestamp = t0, maxAttempts: Int = 5) async throws -> [ClaimedDelivery] {
        try await storage.claim(group: group, limit: limit, at: time, visibility: visibility, maxAttempts: maxAttempts)
    }

    @Test("events are stored once per id, in order, and queued only for groups whose types match", arguments: NotificationStorageKind.allCases)
    func append(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            #expect(try await storage.ensureGroup("all", types: nil, at: Self.t0) == .created)
            #expect(try await storage.ensureGroup("deletions", types: ["deletingAccount"], at: Self.t0) == .created)
            let first = Self.event("a1")
            let deleting = Self.event("a1", .deletingAccount)
            #expect(try await storage.append([first, deleting, first], at: Self.t0) == AppendOutcome(stored: 2, duplicates: 1))
            #expect(try await storage.append([first], at: Self.t0) == AppendOutcome(stored: 0, duplicates: 1))
            #expect(try await Self.claim(storage, "all").map(\.event) == [first])
            #expect(try await Self.claim(storage, "deletions").map(\.event) == [deleting])
            // A group created later receives only what is stored from then on.
            #expect(try await storage.ensureGroup("late", types: nil, at: Self.t0) == .created)
            #expect(try await Self.claim(storage, "late").isEmpty)
            let later = Self.event("a2")
            _ = try await storage.append([later], at: Self.t0)
            #expect(try await Self.claim(storage, "late").map(\.event) == [later])
            let stored = try await Self.settled(storage, accountId: "a1", count: 2)
            #expect(stored.map(\.event) == [first, deleting])
            #expect(stored[0].cursor < stored[1].cursor)
        }
    }

    @Test("a group's types are fixed: the same set in any order is the same group, another set is a mismatch", arguments: NotificationStorageKind.allCases)
    func groups(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            #expect(try await !storage.groupExists("g"))
            #expect(try await storage.ensureGroup("g", types: ["passwordChanged", "deletingAccount"], at: Self.t0) == .created)
            #expect(try await storage.groupExists("g"))
            #expect(try await storage.ensureGroup("g", types: ["deletingAccount", "passwordChanged"], at: Self.t0) == .existing)
            #expect(try await storage.ensureGroup("g", types: ["deletingAccount"], at: Self.t0) == .mismatch)
            #expect(try await storage.ensureGroup("g", types: nil, at: Self.t0) == .mismatch)
            #expect(try await storage.ensureGroup("h", types: nil, at: Self.t0) == .created)
            #expect(try await storage.ensureGroup("h", types: nil, at: Self.t0) == .existing)
        }
    }

    @Test("a group is its declarer's: another caller's declaration is foreign; one without an owner becomes the next declarer's; racing declarers of a new name see one owner", arguments: NotificationStorageKind.allCases)
    func owners(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            #expect(try await storage.groupOwner("g") == nil)
            #expect(try await storage.ensureGroup("g", types: ["passwordChanged"], owner: "profile", at: Self.t0) == .created)
            #expect(try await storage.groupOwner("g") == .some("profile"))
            #expect(try await storage.ensureGroup("g", types: ["passwordChanged"], owner: "profile", at: Self.t0) == .existing)
            #expect(try await storage.ensureGroup("g", types: ["passwordChanged"], owner: "operator-billing", at: Self.t0) == .foreign)
            // Foreign comes before the types: another's group tells nothing of what it receives.
            #expect(try await storage.ensureGroup("g", types: nil, owner: "operator-billing", at: Self.t0) == .foreign)
            // Without an owner (declared before groups had owners): the next declarer with the same types takes it.
            #expect(try await storage.ensureGroup("legacy", types: nil, at: Self.t0) == .created)
            #expect(try await storage.groupOwner("legacy") == .some(nil))
            #expect(try await storage.ensureGroup("legacy", types: ["deletingAccount"], owner: "profile", at: Self.t0) == .mismatch)
            #expect(try await storage.groupOwner("legacy") == .some(nil))
            #expect(try await storage.ensureGroup("legacy", types: nil, owner: "profile", at: Self.t0) == .existing)
            #expect(try await storage.groupOwner("legacy") == .some("profile"))
            #expect(try await storage.ensureGroup("legacy", types: nil, owner: "operator-billing", at: Self.t0) == .foreign)
            // Two callers declaring one new name at once, 20 rounds: one creates it, the other finds it foreign.
            for round in 0..<20 {
                let name = "race-\(round)"
                async let first = storage.ensureGroup(name, types: nil, owner: "profile", at: Self.t0)
                async let second = storage.ensureGroup(name, types: nil, owner: "operator-billing", at: Self.t0)
                let outcomes = [try await first, try await second]
                #expect(outcomes.sorted { "\($0)" < "\($1)" } == [.created, .foreign], "round \(round): \(outcomes)")
            }
        }
    }

    @Test("claims go oldest first and never past an account's earlier queued delivery", arguments: NotificationStorageKind.allCases)
    func perAccountOrder(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("g", types: nil, at: Self.t0)
            let x1 = Self.event("x"), y1 = Self.event("y"), x2 = Self.event("x"), z1 = Self.event("z")
            _ = try await storage.append([x1, y1, x2, z1], at: Self.t0)
            let first = try await Self.claim(storage)
            #expect(first.map(\.event) == [x1, y1, z1])
            #expect(first.allSatisfy { $0.attempts == 1 })
            // x2 waits for x1 even though it is due.
            #expect(try await Self.claim(storage).isEmpty)
            #expect(try await storage.acknowledge(first[0].claim))
            #expect(try await Self.claim(storage).map(\.event) == [x2])
            // The limit counts.
            _ = try await storage.append([Self.event("p"), Self.event("q")], at: Self.t0)
            let limited = try await Self.claim(storage, limit: 1)
            #expect(limited.count == 1)
            // Acks in one call: the current claims count, a stale one does not.
            let batch = limited + (try await Self.claim(storage))
            #expect(batch.count == 2)
            #expect(try await storage.acknowledge(batch.map(\.claim) + [first[0].claim]) == 2)
            #expect(try await storage.acknowledge([]) == 0)
        }
    }

    @Test("a claim hides its delivery until the visibility timeout; then it is claimed again and the old claim is stale", arguments: NotificationStorageKind.allCases)
    func visibility(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("g", types: nil, at: Self.t0)
            let event = Self.event("a1")
            _ = try await storage.append([event], at: Self.t0)
            let first = try #require(try await Self.claim(storage).first)
            #expect(try await Self.claim(storage, at: Self.t0.adding(.seconds(29))).isEmpty)
            #expect(try await storage.nextDue(group: "g") == Self.t0.adding(Self.visibility))
            let second = try #require(try await Self.claim(storage, at: Self.t0.adding(.seconds(30))).first)
            #expect(second.event == event && second.attempts == 2 && second.claim != first.claim)
            #expect(try await !storage.acknowledge(first.claim))
            #expect(try await storage.retry(first.claim, reason: "late", retryAt: Self.t0, maxAttempts: 5, at: Self.t0) == .stale)
            #expect(try await !storage.reject(first.claim, reason: "late", at: Self.t0))
            #expect(try await storage.acknowledge(second.claim))
            #expect(try await !storage.acknowledge(second.claim))
            #expect(try await storage.nextDue(group: "g") == nil)
        }
    }

    @Test("a retry waits until its time; the last allowed attempt's retry goes to dead letter", arguments: NotificationStorageKind.allCases)
    func retries(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("g", types: nil, at: Self.t0)
            let event = Self.event("a1")
            _ = try await storage.append([event], at: Self.t0)
            var now = Self.t0
            for attempt in 1...2 {
                let claimed = try #require(try await Self.claim(storage, at: now, maxAttempts: 3).first)
                #expect(claimed.attempts == attempt)
                let retryAt = now.adding(.seconds(10))
                #expect(try await storage.retry(claimed.claim, reason: "busy \(attempt)", retryAt: retryAt, maxAttempts: 3, at: now) == .scheduled)
                #expect(try await Self.claim(storage, at: retryAt.adding(.milliseconds(-1)), maxAttempts: 3).isEmpty)
                now = retryAt
            }
            let last = try #require(try await Self.claim(storage, at: now, maxAttempts: 3).first)
            #expect(last.attempts == 3)
            #expect(try await storage.retry(last.claim, reason: "still busy", retryAt: now.adding(.seconds(10)), maxAttempts: 3, at: now) == .deadLettered)
            #expect(try await Self.claim(storage, at: now.adding(.seconds(3_600)), maxAttempts: 3).isEmpty)
            #expect(try await storage.deadLetters(group: "g", limit: 10) == [DeadLetter(event: event, attempts: 3, lastError: "still busy", deadAt: now)])
        }
    }

    @Test("a rejected event goes to dead letter at once and stops holding back its account", arguments: NotificationStorageKind.allCases)
    func reject(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("g", types: nil, at: Self.t0)
            let poison = Self.event("a1"), next = Self.event("a1", .sessionsRevoked)
            _ = try await storage.append([poison, next], at: Self.t0)
            let claimed = try #require(try await Self.claim(storage).first)
            #expect(try await storage.reject(claimed.claim, reason: "cannot parse", at: Self.t0))
            #expect(try await Self.claim(storage).map(\.event) == [next])
            #expect(try await storage.deadLetters(group: "g", limit: 10).map(\.lastError) == ["cannot parse"])
        }
    }

    @Test("a delivery whose claims kept timing out goes to dead letter instead of a further claim", arguments: NotificationStorageKind.allCases)
    func exhaustedByTimeouts(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("g", types: nil, at: Self.t0)
            let event = Self.event("a1")
            _ = try await storage.append([event], at: Self.t0)
            var now = Self.t0
            for _ in 1...2 {
                #expect(try await Self.claim(storage, at: now, maxAttempts: 2).count == 1)
                now = now.adding(Self.visibility)
            }
            #expect(try await Self.claim(storage, at: now, maxAttempts: 2).isEmpty)
            let letters = try await storage.deadLetters(group: "g", limit: 10)
            #expect(letters.map(\.event) == [event])
            #expect(letters.first?.attempts == 2)
        }
    }

    @Test("a released claim is due at once, its attempt counted", arguments: NotificationStorageKind.allCases)
    func release(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("g", types: nil, at: Self.t0)
            _ = try await storage.append([Self.event("a1")], at: Self.t0)
            let claimed = try #require(try await Self.claim(storage).first)
            try await storage.release(claimed.claim, at: Self.t0)
            let again = try #require(try await Self.claim(storage).first)
            #expect(again.attempts == 2)
            #expect(try await !storage.acknowledge(claimed.claim))
        }
    }

    @Test("dead letters are replayed, all or by event id, with fresh attempts", arguments: NotificationStorageKind.allCases)
    func replayDeadLetters(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("g", types: nil, at: Self.t0)
            let events = [Self.event("a1"), Self.event("a2"), Self.event("a3")]
            _ = try await storage.append(events, at: Self.t0)
            for claimed in try await Self.claim(storage) {
                #expect(try await storage.reject(claimed.claim, reason: "bad", at: Self.t0))
            }
            #expect(try await storage.replayDeadLetters(group: "g", eventIds: [events[1].id], at: Self.t0) == 1)
            let replayed = try await Self.claim(storage)
            #expect(replayed.map(\.event) == [events[1]])
            #expect(replayed.first?.attempts == 1)
            #expect(try await storage.deadLetters(group: "g", limit: 10).map(\.event) == [events[0], events[2]])
            #expect(try await storage.replayDeadLetters(group: "g", eventIds: nil, at: Self.t0) == 2)
            #expect(try await storage.deadLetters(group: "g", limit: 10).isEmpty)
            #expect(try await Self.claim(storage).map(\.event) == [events[0], events[2]])
            #expect(try await storage.replayDeadLetters(group: "nobody", eventIds: nil, at: Self.t0) == 0)
        }
    }

    @Test("replay queues again the group's events since a time, not those still queued", arguments: NotificationStorageKind.allCases)
    func replay(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("g", types: ["passwordChanged"], at: Self.t0)
            let old = Self.event("a1", at: Self.t0.adding(.seconds(-100)))
            let recent = Self.event("a2", at: Self.t0.adding(.seconds(-10)))
            let otherType = Self.event("a3", .sessionsRevoked, at: Self.t0.adding(.seconds(-10)))
            let queued = Self.event("a4", at: Self.t0.adding(.seconds(-5)))
            _ = try await storage.append([old, recent, otherType, queued], at: Self.t0)
            for claimed in try await Self.claim(storage) where claimed.event != queued {
                #expect(try await storage.acknowledge(claimed.claim))
            }
            #expect(try await storage.replay(group: "g", from: Self.t0.adding(.seconds(-20)), at: Self.t0.adding(.seconds(20))) == 1)
            // `queued` is still claimed by its first consumer (within its visibility); `recent` is back.
            #expect(try await Self.claim(storage, at: Self.t0.adding(.seconds(20))).map(\.event) == [recent])
        }
    }

    @Test("an account's events are read after a position, found by event id only for their own account", arguments: NotificationStorageKind.allCases)
    func accountEvents(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            let events = [Self.event("a1"), Self.event("a2"), Self.event("a1", .sessionsRevoked), Self.event("a1", .deletingAccount)]
            _ = try await storage.append(events, at: Self.t0)
            _ = try await Self.settled(storage, accountId: "a1", count: 3)
            let position = try #require(try await storage.cursor(ofEvent: events[0].id, accountId: "a1"))
            #expect(try await storage.cursor(ofEvent: events[0].id, accountId: "a2") == nil)
            #expect(try await storage.cursor(ofEvent: UUID(), accountId: "a1") == nil)
            #expect(try await storage.accountEvents(accountId: "a1", after: position, limit: 10).map(\.event) == [events[2], events[3]])
            #expect(try await storage.accountEvents(accountId: "a1", after: position, limit: 1).map(\.event) == [events[2]])
            #expect(try await storage.accountEvents(accountId: "nobody", after: nil, limit: 10).isEmpty)
        }
    }

    /// The tail after `cursor` once it holds `count` events: PostgreSQL settles events once every older transaction
    /// of the cluster (which other tests share) has ended. Bounded by the deadline.
    static func tail(_ storage: any NotificationStorage, after cursor: TailCursor, types: [String]? = nil, limit: Int = 10, count: Int) async throws -> [TailedEvent] {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let tailed = try await storage.tail(after: cursor, types: types, limit: limit)
            if tailed.count >= count || ContinuousClock.now > deadline { return tailed }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The account's events once `count` have settled (see ``tail(_:after:types:limit:count:)``). Bounded.
    static func settled(_ storage: any NotificationStorage, accountId: String, count: Int) async throws -> [TailedEvent] {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let events = try await storage.accountEvents(accountId: accountId, after: nil, limit: 100)
            if events.count >= count || ContinuousClock.now > deadline { return events }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test("a tail gives the events stored after its cursor, of the asked types, in order", arguments: NotificationStorageKind.allCases)
    func tail(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.append([Self.event("a0")], at: Self.t0)
            let start = try await storage.tailCursor()
            #expect(TailCursor(start.description) == start)
            let events = [Self.event("a1"), Self.event("a2", .sessionsRevoked), Self.event("a1", .deletingAccount)]
            _ = try await storage.append(events, at: Self.t0)
            let all = try await Self.tail(storage, after: start, count: 3)
            #expect(all.map(\.event) == events)
            #expect(all.map(\.cursor) == all.map(\.cursor).sorted())
            #expect(all.allSatisfy { $0.cursor > start })
            #expect(try await storage.tail(after: start, types: ["deletingAccount", "sessionsRevoked"], limit: 10).map(\.event) == [events[1], events[2]])
            #expect(try await storage.tail(after: start, types: nil, limit: 1).map(\.event) == [events[0]])
            #expect(try await storage.tail(after: all[0].cursor, types: nil, limit: 10).map(\.event) == [events[1], events[2]])
            let end = try #require(all.last?.cursor)
            #expect(try await storage.tail(after: end, types: nil, limit: 10).isEmpty)
            let later = Self.event("a3")
            _ = try await storage.append([later], at: Self.t0)
            #expect(try await Self.tail(storage, after: end, count: 1).map(\.event) == [later])
        }
    }

    /// Positions come from a sequence at insert time: an event inserted first but committed last has the lower
    /// position. A reader that only kept the highest position seen would have passed it when it commits; the tail
    /// holds back until it has settled.
    @Test("a tail and an account's feed do not skip an event whose transaction commits after a later-numbered one's (PostgreSQL)")
    func tailWaitsForOlderTransactions() async throws {
        try await TestDatabase.withFreshDatabase { database in
            try await NotificationStorageKind.withPostgres(database) { storage in
                try await storage.migrate()
                let start = try await storage.tailCursor()
                let early = Self.event("shared")
                let late = Self.event("shared", .sessionsRevoked)
                let client = PostgresClient(configuration: database.clientConfiguration, backgroundLogger: NotificationStorageKind.logger)
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { await client.run() }
                    defer { tasks.cancelAll() }
                    try await client.withConnection { connection in
                        try await connection.query("BEGIN", logger: NotificationStorageKind.logger)
                        let document = String(decoding: try JSONEncoder().encode(early), as: UTF8.self)
                        try await connection.query(
                            """
                            INSERT INTO notifications.events (event_id, account_id, type, event, occurred_at, stored_at)
                            VALUES (\(early.id), \(early.accountId), \(early.kind.name), \(document)::jsonb, \(early.time), \(early.time))
                            """,
                            logger: NotificationStorageKind.logger
                        )
                        _ = try await storage.append([late], at: Self.t0)
                        // `late` is committed, with the higher position, but `early`'s transaction is still running.
                        #expect(try await storage.tail(after: start, types: nil, limit: 10).isEmpty)
                        // A feed reader that got `late` now would have passed `early` for good.
                        #expect(try await storage.accountEvents(accountId: "shared", after: nil, limit: 10).isEmpty)
                        try await connection.query("COMMIT", logger: NotificationStorageKind.logger)
                    }
                }
                let tailed = try await Self.tail(storage, after: start, count: 2)
                #expect(tailed.map(\.event.id) == [early.id, late.id])
                // The same for one account's feed: `early` and `late` are one account's events here.
                #expect(try await Self.settled(storage, accountId: "shared", count: 2).map(\.event.id) == [early.id, late.id])
                try #require(tailed.count == 2)
                #expect(tailed[0].cursor.position < tailed[1].cursor.position)
            }
        }
    }

    @Test("tail cursors read back only in their own form")
    func tailCursorForm() {
        #expect(TailCursor("12.34") == TailCursor(transaction: 12, position: 34))
        #expect(TailCursor("12.34/10:15:") == TailCursor(transaction: 12, position: 34, snapshot: "10:15:"))
        #expect(TailCursor("12.34/10:15:11,13") == TailCursor(transaction: 12, position: 34, snapshot: "10:15:11,13"))
        for bad in [
            "", "12", "12.", ".34", "a.b", "1.2.3", "-1.2", "1.-2", "+1.2", " 1.2", "99999999999999999999.1", String(repeating: "1", count: 50),
            "1.2/", "1.2/10:15", "1.2/10:15:11,", "1.2/10:15:,11", "1.2/10:15:11;DROP", "1.2/a:b:", "1.2/10:15:11/3",
            "1.2/1:2:" + String(repeating: "3,", count: 9_000) + "3",
        ] {
            #expect(TailCursor(bad) == nil, "\(bad)")
        }
    }
}
