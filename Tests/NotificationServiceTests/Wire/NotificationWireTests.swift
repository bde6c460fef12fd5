import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NotificationService
import Synchronization
import Testing

/// The Notifications contract over the wire, on PostgreSQL and in memory.
@Suite("Notifications over the wire", .timeLimit(.minutes(2)))
struct NotificationWireTests {
    typealias Harness = NotificationServiceHarness

    /// The next `count` deliveries of `subscription`, within a time bound.
    /// (Every test has a time limit, which bounds the waits.)
    static func take(_ count: Int, from subscription: WireClientSubscription<AccountEvent>) async throws -> [WireDelivery<AccountEvent>] {
        var taken: [WireDelivery<AccountEvent>] = []
        var iterator = subscription.makeAsyncIterator()
        while taken.count < count, let delivery = try await iterator.next() {
            taken.append(delivery)
        }
        return taken
    }

    @Test("published events reach a consumer group in order; a re-published event is stored once", arguments: NotificationStorageKind.allCases)
    func publishAndConsume(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind) { running in
            let client = running.client()
            try await Harness.with(client) {
                #expect(try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "mailer")).created)
                #expect(try await !client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "mailer")).created)
                let subscription = try await client.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "mailer"), credit: 8)
                let events = (0..<5).map { Harness.event("a\($0 % 2)") }
                #expect(try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: events)) == NotificationsPublished(stored: 5, duplicates: 0))
                #expect(try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [events[2]])) == NotificationsPublished(stored: 0, duplicates: 1))
                // Acked as they come: an account's next event waits for the previous one's ack.
                var received: [WireDelivery<AccountEvent>] = []
                for try await delivery in subscription {
                    received.append(delivery)
                    subscription.acknowledge(delivery)
                    if received.count == 5 { break }
                }
                // In order per account, which is the guarantee: across accounts, the next event of whichever account's
                // ack comes first goes first (the acks of a0's and a1's first events race).
                #expect(Set(received.map(\.event.id)) == Set(events.map(\.id)))
                for account in ["a0", "a1"] {
                    #expect(received.map(\.event).filter { $0.accountId == account } == events.filter { $0.accountId == account }, "\(account)")
                }
                #expect(received.allSatisfy { $0.topic == "passwordChanged" })
                subscription.cancel()
            }
        }
    }

    @Test("two consumers of one group under load: each event to exactly one of them, each account's events in order", arguments: NotificationStorageKind.allCases)
    func twoConsumers(kind: NotificationStorageKind) async throws {
        // The harness's visibility timeout is far beyond the test's run: an event delivered twice is a defect.
        try await Harness.withService(kind) { running in
            let (first, second, publisher) = (running.client(), running.client(), running.client())
            try await Harness.with(first) {
                try await Harness.with(second) {
                    try await Harness.with(publisher) {
                        let log = DeliveryLog()
                        let total = 300
                        let events = (0..<total).map { Harness.event("account-\($0 % 15)") }
                        _ = try await publisher.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "workers"))
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            for (index, client) in [first, second].enumerated() {
                                let subscription = try await client.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "workers"), credit: 4)
                                group.addTask {
                                    for try await delivery in subscription {
                                        log.withLock { $0.append((index, delivery.event)) }
                                        subscription.acknowledge(delivery)
                                    }
                                    subscription.cancel()
                                }
                            }
                            for batch in stride(from: 0, to: total, by: 25) {
                                _ = try await publisher.call(NotificationsContract.publish, NotificationsPublishRequest(events: Array(events[batch..<batch + 25])))
                            }
                            while log.withLock({ Set($0.map(\.event.id)).count }) < total {
                                try await Task.sleep(for: .milliseconds(20))
                            }
                            group.cancelAll()
                        }
                        let received = log.withLock { $0 }
                        #expect(received.count == total)
                        #expect(Set(received.map(\.event.id)) == Set(events.map(\.id)), "every event exactly once")
                        // Each account's events were delivered (and acked before the next) in publish order.
                        for account in Set(events.map(\.accountId)) {
                            let published = events.filter { $0.accountId == account }.map(\.id)
                            let delivered = received.filter { $0.event.accountId == account }.map(\.event.id)
                            #expect(delivered == published, "order of \(account)")
                        }
                        #expect(Set(received.map(\.consumer)).count == 2, "both consumers took a share")
                    }
                }
            }
        }
    }

    @Test("a consumer that goes away without acking: its events go to the group's other consumer", arguments: NotificationStorageKind.allCases)
    func consumerCrashes(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind) { running in
            let (crashing, survivor) = (running.client(), running.client())
            try await Harness.with(survivor) {
                let events = [Harness.event("a1"), Harness.event("a2")]
                _ = try await survivor.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "g"))
                try await Harness.with(crashing) {
                    let subscription = try await crashing.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "g"), credit: 4)
                    _ = try await crashing.call(NotificationsContract.publish, NotificationsPublishRequest(events: events))
                    let received = try await Self.take(2, from: subscription)
                    #expect(Set(received.map(\.event.id)) == Set(events.map(\.id)))
                    // The process stops here without acking: its connection closes.
                }
                let subscription = try await survivor.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "g"), credit: 4)
                let redelivered = try await Self.take(2, from: subscription)
                #expect(Set(redelivered.map(\.event.id)) == Set(events.map(\.id)))
                redelivered.forEach { subscription.acknowledge($0) }
                subscription.cancel()
            }
        }
    }

    @Test("a poison event is retried with back-off, dead-lettered after the last attempt, listed, and replayed", arguments: NotificationStorageKind.allCases)
    func poison(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind) { running in
            let client = running.client()
            try await Harness.with(client) {
                _ = try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "g"))
                let subscription = try await client.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "g"), credit: 1)
                let poison = Harness.event("a1"), next = Harness.event("a1", .sessionsRevoked), rejected = Harness.event("a2")
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [poison, next, rejected]))
                var iterator = subscription.makeAsyncIterator()
                var attempts = 0
                var others: [AccountEvent] = []
                // Three attempts (the harness's maximum) of the poison event, each answered "retry"; the rejected one is
                // rejected at once; after the dead letter, the account's next event comes.
                while others.count < 2 {
                    let delivery = try #require(try await iterator.next())
                    switch delivery.event {
                    case poison:
                        attempts += 1
                        subscription.acknowledge(delivery, .retry(reason: "cannot handle \(attempts)"))
                    case rejected:
                        others.append(delivery.event)
                        subscription.acknowledge(delivery, .reject(reason: "malformed"))
                    default:
                        #expect(attempts == 3, "the account's next event came before its earlier one was settled")
                        others.append(delivery.event)
                        subscription.acknowledge(delivery)
                    }
                }
                #expect(attempts == 3)
                // Outcomes are stored asynchronously: poll until both letters are there.
                var letters: [NotificationsDeadLetter] = []
                while letters.count < 2 {
                    letters = try await client.call(NotificationsContract.deadLetters, NotificationsDeadLettersRequest(group: "g")).letters
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(letters.map(\.event) == [poison, rejected])
                #expect(letters.map(\.attempts) == [3, 1])
                #expect(letters.map(\.lastError) == ["cannot handle 3", "malformed"])
                let replayed = try await client.call(NotificationsContract.replayDeadLetters, NotificationsReplayDeadLettersRequest(group: "g", eventIds: [poison.id]))
                #expect(replayed.replayed == 1)
                let again = try #require(try await iterator.next())
                #expect(again.event == poison)
                subscription.acknowledge(again)
                subscription.cancel()
            }
        }
    }

    @Test("replay from a point in time delivers a group's settled events again", arguments: NotificationStorageKind.allCases)
    func replayFromTime(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind) { running in
            let client = running.client()
            try await Harness.with(client) {
                _ = try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "g", types: ["deletingAccount"]))
                let subscription = try await client.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "g", types: ["deletingAccount"]), credit: 4)
                let old = Harness.event("a1", .deletingAccount, at: Date(timeIntervalSinceNow: -3_600))
                let recent = Harness.event("a2", .deletingAccount, at: Date(timeIntervalSinceNow: -60))
                let otherType = Harness.event("a3", .passwordChanged, at: Date(timeIntervalSinceNow: -60))
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [old, recent, otherType]))
                let first = try await Self.take(2, from: subscription)
                #expect(first.map(\.event) == [old, recent])
                first.forEach { subscription.acknowledge($0) }
                // Acks are stored asynchronously; a replay before they are finds the events still queued (0).
                var count = 0
                while count == 0 {
                    count = try await client.call(NotificationsContract.replay, NotificationsReplayRequest(group: "g", from: Timestamp(Date(timeIntervalSinceNow: -600)))).replayed
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(count == 1)
                #expect(try await Self.take(1, from: subscription).map(\.event) == [recent])
                subscription.cancel()
            }
        }
    }

    @Test("a feed gives one account's events after a given one, then new ones as they are published", arguments: NotificationStorageKind.allCases)
    func feed(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind) { running in
            let client = running.client()
            try await Harness.with(client) {
                let history = [Harness.event("a1"), Harness.event("a2"), Harness.event("a1", .sessionsRevoked), Harness.event("a1", .userIdChanged(previous: "x", new: "y"))]
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: history))
                let feed = try await client.subscribe(NotificationsContract.feed, NotificationsFeedRequest(accountId: "a1", after: history[0].id), credit: 2)
                var iterator = feed.makeAsyncIterator()
                var seen: [AccountEvent] = []
                for _ in 0..<2 {
                    let delivery = try #require(try await iterator.next())
                    seen.append(delivery.event)
                    feed.acknowledge(delivery)
                }
                #expect(seen == [history[2], history[3]])
                let live = Harness.event("a1", .deletingAccount)
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [Harness.event("a2"), live]))
                let next = try #require(try await iterator.next())
                #expect(next.event == live)
                feed.cancel()
                // From the start, and an unknown starting event.
                let whole = try await client.subscribe(NotificationsContract.feed, NotificationsFeedRequest(accountId: "a1"), credit: 8)
                #expect(try await Self.take(4, from: whole).map(\.event) == [history[0], history[2], history[3], live])
                whole.cancel()
                let unknown = try await client.subscribe(NotificationsContract.feed, NotificationsFeedRequest(accountId: "a2", after: history[0].id), credit: 1)
                #expect(await wireErrorCode { try await Self.take(1, from: unknown) } == KontoErrorCode.notificationsUnknownEvent)
            }
        }
    }

    @Test("a tail gives every account's events after its cursor, then new ones as they are published", arguments: NotificationStorageKind.allCases)
    func tail(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind) { running in
            let client = running.client()
            try await Harness.with(client) {
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [Harness.event("before")]))
                let cursor = try await client.call(NotificationsContract.tailCursor, NotificationsTailCursorRequest())
                let history = [Harness.event("a1"), Harness.event("a2", .sessionsRevoked), Harness.event("a1", .deletingAccount)]
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: history))
                let tail = try await client.subscribe(NotificationsContract.tail, NotificationsTailRequest(after: cursor.cursor), credit: 2)
                var iterator = tail.makeAsyncIterator()
                var seen: [AccountEvent] = []
                for _ in 0..<3 {
                    let delivery = try #require(try await iterator.next())
                    seen.append(delivery.event)
                    tail.acknowledge(delivery)
                }
                #expect(seen == history)
                let live = Harness.event("a3", .passwordChanged)
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [live]))
                #expect(try #require(try await iterator.next()).event == live)
                tail.cancel()
                // Only the asked types.
                let deletions = try await client.subscribe(
                    NotificationsContract.tail, NotificationsTailRequest(after: cursor.cursor, types: ["deletingAccount"]), credit: 4)
                #expect(try await Self.take(1, from: deletions).map(\.event) == [history[2]])
                deletions.cancel()
                // A cursor the service did not give, and unknown types.
                for request in [NotificationsTailRequest(after: "not a cursor"), NotificationsTailRequest(after: cursor.cursor, types: ["noSuchEvent"])] {
                    let bad = try await client.subscribe(NotificationsContract.tail, request, credit: 1)
                    #expect(await wireErrorCode { try await Self.take(1, from: bad) } == KontoErrorCode.notificationsInvalidRequest, "\(request)")
                }
            }
        }
    }

    @Test("bad requests get their error codes", arguments: NotificationStorageKind.allCases)
    func errors(kind: NotificationStorageKind) async throws {
        try await Harness.withService(kind) { running in
            let client = running.client()
            try await Harness.with(client) {
                let invalid = KontoErrorCode.notificationsInvalidRequest
                let tooMany = (0...NotificationsContract.maximumPublishBatch).map { Harness.event("a\($0)") }
                #expect(await wireErrorCode { try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: tooMany)) } == invalid)
                #expect(await wireErrorCode { try await client.call(NotificationsContract.deadLetters, NotificationsDeadLettersRequest(group: "never")) } == KontoErrorCode.notificationsUnknownGroup)
                #expect(await wireErrorCode { try await client.call(NotificationsContract.replay, NotificationsReplayRequest(group: "never", from: .now)) } == KontoErrorCode.notificationsUnknownGroup)
                #expect(await wireErrorCode { try await client.call(NotificationsContract.replayDeadLetters, NotificationsReplayDeadLettersRequest(group: "")) } == invalid)
                #expect(await wireErrorCode { try await client.call(NotificationsContract.deadLetters, NotificationsDeadLettersRequest(group: "g", limit: 0)) } == invalid)
                for request in [
                    NotificationsSubscribeRequest(group: ""),
                    NotificationsSubscribeRequest(group: String(repeating: "g", count: 129)),
                    NotificationsSubscribeRequest(group: "g", types: []),
                    NotificationsSubscribeRequest(group: "g", types: ["passwordChanged", "noSuchEvent"]),
                ] {
                    let subscription = try await client.subscribe(NotificationsContract.subscribe, request, credit: 1)
                    #expect(await wireErrorCode { try await Self.take(1, from: subscription) } == invalid, "\(request)")
                }
                _ = try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "g", types: ["deletingAccount"]))
                #expect(await wireErrorCode { try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "g", types: nil)) } == KontoErrorCode.notificationsGroupMismatch)
                let first = try await client.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "g", types: ["deletingAccount"]), credit: 1)
                let mismatched = try await client.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: "g", types: ["passwordChanged"]), credit: 1)
                #expect(await wireErrorCode { try await Self.take(1, from: mismatched) } == KontoErrorCode.notificationsGroupMismatch)
                first.cancel()
                let badFeed = try await client.subscribe(NotificationsContract.feed, NotificationsFeedRequest(accountId: ""), credit: 1)
                #expect(await wireErrorCode { try await Self.take(1, from: badFeed) } == invalid)
                let health = try await client.call(HealthContract.check, HealthCheckRequest())
                #expect(health.checks.allSatisfy { $0.status == .ready })
            }
        }
    }
}

/// What each consumer received, shared by the consumers' tasks.
final class DeliveryLog: Sendable {
    private let entries = Mutex<[(consumer: Int, event: AccountEvent)]>([])

    func withLock<T>(_ body: (inout [(consumer: Int, event: AccountEvent)]) -> T) -> T {
        entries.withLock { body(&$0) }
    }
}
