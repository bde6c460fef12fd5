import Foundation
import KontoContracts
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import NotificationService
import PostgresNIO
import Synchronization
import Testing

/// `notifications.tailBarrier` over the wire, on PostgreSQL and in memory: a change's barrier completes only once
/// every live cache-holding reader has acknowledged its events, and stops waiting for readers that are gone.
@Suite("Tail barrier over the wire", .timeLimit(.minutes(3)))
struct TailBarrierTests {
    typealias Harness = NotificationServiceHarness

    static func options(lease: Duration = .seconds(5), deadline: Duration = .seconds(2)) -> NotificationOptions {
        var options = Harness.quickOptions
        options.tailReaderLease = lease
        options.tailReaderRenewal = lease / 5
        options.tailAcknowledgementDeadline = deadline
        return options
    }

    static func barrier(_ client: WireClient, _ events: [AccountEvent], timeout: Duration) async throws -> NotificationsTailBarrier {
        try await client.call(
            NotificationsContract.tailBarrier,
            NotificationsTailBarrierRequest(eventIds: events.map(\.id), timeoutMilliseconds: Int(timeout.milliseconds))
        )
    }

    static func publish(_ client: WireClient, _ events: [AccountEvent]) async throws {
        _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: events))
    }

    /// A registered reader and its tail.
    static func reader(_ client: WireClient, credit: Int = 16) async throws -> (UUID, WireClientSubscription<AccountEvent>) {
        let cursor = try await client.call(NotificationsContract.tailCursor, NotificationsTailCursorRequest(holdsCache: true))
        let reader = try #require(cursor.readerId)
        let tail = try await client.subscribe(NotificationsContract.tail, NotificationsTailRequest(after: cursor.cursor, readerId: reader), credit: credit)
        return (reader, tail)
    }

    @Test("a barrier waits for a reader's acknowledgement, and completes at once with no reader or only plain tails", arguments: NotificationStorageKind.allCases)
    func waitsForAcknowledgement(kind: NotificationStorageKind) async throws {
        // A deadline no loaded machine reaches here: the reader holds events unacknowledged on purpose.
        try await Harness.withService(kind, options: Self.options(deadline: .seconds(30))) { running in
            let client = running.client()
            try await Harness.with(client) {
                // No reader holds a cache: nothing to wait for, not even for the event to be stored.
                let unstored = Harness.event("nobody")
                #expect(try await Self.barrier(client, [unstored], timeout: .seconds(5)) == NotificationsTailBarrier(complete: true, readersBehind: 0))
                // A plain tail is not waited for.
                let plain = try await client.call(NotificationsContract.tailCursor, NotificationsTailCursorRequest())
                #expect(plain.readerId == nil)
                let plainTail = try await client.subscribe(NotificationsContract.tail, NotificationsTailRequest(after: plain.cursor), credit: 4)
                let ignored = Harness.event("plain")
                try await Self.publish(client, [ignored])
                #expect(try await Self.barrier(client, [ignored], timeout: .seconds(5)).complete)
                plainTail.cancel()

                let (_, tail) = try await Self.reader(client)
                let change = [Harness.event("a1", .sessionsRevoked), Harness.event("a1", .disassociatingAccount)]
                // Not stored yet: the barrier waits for that too, and times out with the reader behind.
                #expect(try await Self.barrier(client, change, timeout: .milliseconds(200)) == NotificationsTailBarrier(complete: false, readersBehind: 1))
                try await Self.publish(client, change)
                var iterator = tail.makeAsyncIterator()
                let first = try #require(try await iterator.next())
                let second = try #require(try await iterator.next())
                #expect([first.event, second.event] == change)
                // Delivered, not acknowledged: still behind.
                #expect(try await Self.barrier(client, change, timeout: .milliseconds(200)) == NotificationsTailBarrier(complete: false, readersBehind: 1))
                tail.acknowledge(first)
                #expect(try await Self.barrier(client, [change[0]], timeout: .seconds(10)).complete)
                #expect(try await !Self.barrier(client, change, timeout: .milliseconds(200)).complete)
                tail.acknowledge(second)
                #expect(try await Self.barrier(client, change, timeout: .seconds(10)) == NotificationsTailBarrier(complete: true, readersBehind: 0))
                tail.cancel()
            }
        }
    }

    /// The property the gateways rely on, many rounds with the reader on its own task: when a barrier says complete,
    /// the reader has already handled the event (it marks an event handled before acknowledging it).
    @Test("a complete barrier means the reader has handled the events, round after round", arguments: NotificationStorageKind.allCases)
    func completeMeansHandled(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind, options: Self.options()) { running in
            let (readerClient, client) = (running.client(), running.client())
            try await Harness.with(readerClient) {
                try await Harness.with(client) {
                    let handled = Mutex<Set<UUID>>([])
                    let (_, tail) = try await Self.reader(readerClient)
                    let reading = Task {
                        for try await delivery in tail {
                            _ = handled.withLock { $0.insert(delivery.event.id) }
                            tail.acknowledge(delivery)
                        }
                    }
                    defer { reading.cancel(); tail.cancel() }
                    for round in 0..<40 {
                        let change = [Harness.event("round-\(round)", .sessionsRevoked)]
                        try await Self.publish(client, change)
                        let barrier = try await Self.barrier(client, change, timeout: .seconds(10))
                        #expect(barrier.complete, "round \(round)")
                        #expect(handled.withLock { $0.contains(change[0].id) }, "round \(round): complete before the reader had the event")
                    }
                }
            }
        }
    }

    @Test("a reader that leaves an event unacknowledged past the deadline has its tail ended and is waited for no more", arguments: NotificationStorageKind.allCases)
    func slowReaderEnded(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind, options: Self.options(deadline: .milliseconds(300))) { running in
            let client = running.client()
            try await Harness.with(client) {
                let (reader, tail) = try await Self.reader(client)
                let change = [Harness.event("stuck")]
                try await Self.publish(client, change)
                var iterator = tail.makeAsyncIterator()
                #expect(try #require(try await iterator.next()).event == change[0])
                // Never acknowledged: the tail ends (without an error: the reader starts afresh, as after any end).
                while try await iterator.next() != nil {}
                #expect(try await Self.barrier(client, change, timeout: .seconds(10)) == NotificationsTailBarrier(complete: true, readersBehind: 0))
                // The reader is gone: its id does not start a tail again.
                let again = try await client.subscribe(NotificationsContract.tail, NotificationsTailRequest(after: "0.0", readerId: reader), credit: 1)
                #expect(await wireErrorCode { try await NotificationWireTests.take(1, from: again) } == KontoErrorCode.notificationsInvalidRequest)
            }
        }
    }

    /// A renewal that cannot finish before the lease would end (here: the reader's row held locked by another
    /// session) ends the tail: a barrier may stop waiting once the lease ends, so the reader's cache must be off by then.
    @Test("a reader whose lease cannot be renewed in time has its tail ended before the lease ends (PostgreSQL)")
    func renewalHeldUp() async throws {
        try await TestDatabase.withFreshDatabase { database in
            let settings = PostgresSettings(host: database.host, port: database.port, username: database.username, password: database.password, database: database.database)
            try await Harness.run(database: settings, options: Self.options(lease: .seconds(2)), webhooks: []) { running in
                let client = running.client()
                try await Harness.with(client) {
                    let (reader, tail) = try await Self.reader(client)
                    let locker = PostgresClient(configuration: database.clientConfiguration, backgroundLogger: Harness.logger)
                    try await withThrowingTaskGroup(of: Void.self) { tasks in
                        tasks.addTask { await locker.run() }
                        defer { tasks.cancelAll() }
                        try await locker.withConnection { connection in
                            try await connection.query("BEGIN", logger: Harness.logger)
                            try await connection.query("SELECT 1 FROM notifications.tail_readers WHERE reader_id = \(reader) FOR UPDATE", logger: Harness.logger)
                            let locked = ContinuousClock.now
                            var iterator = tail.makeAsyncIterator()
                            do {
                                while try await iterator.next() != nil {}
                            } catch let error as WireError where error.code == .notificationsStorageUnavailable {
                                // On a loaded machine the tail's own read can give up first (the held-up renewal
                                // keeps its pooled connection busy): the tail ends all the same, which is the point.
                            }
                            // Renewed at most one interval before the lock: the lease ran at most 2 s past that.
                            #expect(ContinuousClock.now - locked < .seconds(2), "the tail ended \(ContinuousClock.now - locked) after the lock")
                            try await connection.query("ROLLBACK", logger: Harness.logger)
                        }
                    }
                }
            }
        }
    }

    @Test("a reader registered and never tailing is waited for only until its lease ends; then it cannot tail", arguments: NotificationStorageKind.allCases)
    func leaseEnds(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind, options: Self.options(lease: .milliseconds(1_500))) { running in
            let client = running.client()
            try await Harness.with(client) {
                // Before the registration: its lease (1.5 s) ends no sooner than 1.5 s after this.
                let start = ContinuousClock.now
                let cursor = try await client.call(NotificationsContract.tailCursor, NotificationsTailCursorRequest(holdsCache: true))
                let reader = try #require(cursor.readerId)
                let change = [Harness.event("leased")]
                try await Self.publish(client, change)
                // Waited for while leased (nobody acknowledges), then not: the barrier completes once the lease ended.
                #expect(try await !Self.barrier(client, change, timeout: .milliseconds(100)).complete)
                #expect(try await Self.barrier(client, change, timeout: .seconds(10)).complete)
                // (A little under 1.5 s: the lease is reckoned by the wall clock, this by the monotonic one.)
                #expect(ContinuousClock.now - start >= .milliseconds(1_450))
                let late = try await client.subscribe(NotificationsContract.tail, NotificationsTailRequest(after: cursor.cursor, readerId: reader), credit: 1)
                #expect(await wireErrorCode { try await NotificationWireTests.take(1, from: late) } == KontoErrorCode.notificationsInvalidRequest)
            }
        }
    }

    @Test("a reader registered in place of an earlier one retires it at once: barriers stop waiting for it", arguments: NotificationStorageKind.allCases)
    func replacedReaderRetired(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind, options: Self.options(lease: .seconds(60))) { running in
            let client = running.client()
            try await Harness.with(client) {
                // A reader whose tail died with its Notifications replica: leased for a long while, acknowledging nothing.
                let dead = try await client.call(NotificationsContract.tailCursor, NotificationsTailCursorRequest(holdsCache: true))
                let change = [Harness.event("replaced")]
                try await Self.publish(client, change)
                #expect(try await Self.barrier(client, change, timeout: .milliseconds(100)) == NotificationsTailBarrier(complete: false, readersBehind: 1))
                // Its cache starts again, naming the reader it replaces.
                let fresh = try await client.call(NotificationsContract.tailCursor, NotificationsTailCursorRequest(holdsCache: true, replacing: dead.readerId))
                #expect(fresh.readerId != nil && fresh.readerId != dead.readerId)
                #expect(try await Self.barrier(client, change, timeout: .seconds(10)) == NotificationsTailBarrier(complete: true, readersBehind: 0))
                let late = try await client.subscribe(NotificationsContract.tail, NotificationsTailRequest(after: dead.cursor, readerId: dead.readerId), credit: 1)
                #expect(await wireErrorCode { try await NotificationWireTests.take(1, from: late) } == KontoErrorCode.notificationsInvalidRequest)
            }
        }
    }

    @Test("bad barriers and reader tails are refused", arguments: NotificationStorageKind.allCases)
    func refusals(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind, options: Self.options()) { running in
            let client = running.client()
            try await Harness.with(client) {
                let invalid = KontoErrorCode.notificationsInvalidRequest
                let tooMany = (0...NotificationsContract.maximumBarrierEvents).map { _ in UUID() }
                for request in [
                    NotificationsTailBarrierRequest(eventIds: [], timeoutMilliseconds: 10),
                    NotificationsTailBarrierRequest(eventIds: tooMany, timeoutMilliseconds: 10),
                    NotificationsTailBarrierRequest(eventIds: [UUID()], timeoutMilliseconds: -1),
                    NotificationsTailBarrierRequest(eventIds: [UUID()], timeoutMilliseconds: NotificationsContract.maximumBarrierTimeoutMilliseconds + 1),
                ] {
                    #expect(await wireErrorCode { try await client.call(NotificationsContract.tailBarrier, request) } == invalid, "\(request.eventIds.count) \(request.timeoutMilliseconds)")
                }
                let cursor = try await client.call(NotificationsContract.tailCursor, NotificationsTailCursorRequest(holdsCache: true))
                let reader = try #require(cursor.readerId)
                // A reader tails every type; an unknown reader is refused.
                for request in [
                    NotificationsTailRequest(after: cursor.cursor, types: ["sessionsRevoked"], readerId: reader),
                    NotificationsTailRequest(after: cursor.cursor, readerId: UUID()),
                ] {
                    let bad = try await client.subscribe(NotificationsContract.tail, request, credit: 1)
                    #expect(await wireErrorCode { try await NotificationWireTests.take(1, from: bad) } == invalid, "\(request)")
                }
            }
        }
    }
}
