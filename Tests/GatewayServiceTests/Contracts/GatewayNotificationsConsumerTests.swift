import Foundation
import GatewayService
import KontoContracts
import KontoModel
import KontoTesting
import KontoWire
import NIOCore
import Synchronization
import Testing

/// The gateway's Notifications client as a consumer of the Notifications contract: its account cache follows the
/// tail, and its event stream reads an account's feed, with exactly the recorded requests, reading the recorded
/// events (a stand-in Notifications answers from the examples and keeps what it received).
@Suite("Gateway as a consumer of the Notifications contract", .serialized, .timeLimit(.minutes(2)))
struct GatewayNotificationsConsumerTests {
    typealias Delivery = (topic: String, event: [UInt8])

    /// A stand-in Notifications: answers the tail cursor and pushes the played subscription's recorded events (or
    /// ends it with its recorded error); keeps the requests it received and the acknowledgements.
    final class StandIn: Sendable {
        private let state = Mutex<(example: ContractExample?, received: [String: [String]], settled: [WireAck.Disposition])>((nil, [:], []))
        let cursor: String
        /// Whose session every token is (the stand-in Identity's answer).
        let sessionAccount = Mutex("account-0")

        init(cursor: String) {
            self.cursor = cursor
        }

        func play(_ example: ContractExample?) {
            state.withLock { $0.example = example; $0.received = [:]; $0.settled = [] }
        }

        func received(_ method: String) -> [String] { state.withLock { $0.received[method] ?? [] } }
        var settled: [WireAck.Disposition] { state.withLock { $0.settled } }

        func record(_ method: String, _ payload: ByteBuffer) -> ContractExample? {
            let request = (try? ContractExample.canonical(json: payload.readableBytesView)) ?? "unreadable"
            return state.withLock { state in
                state.received[method, default: []].append(request)
                return state.example?.method == method ? state.example : nil
            }
        }

        func serve(_ method: String, _ payload: ByteBuffer, _ subscription: WireSubscription) async throws {
            // A subscription that is not being played stays open and quiet (the tail, while a feed is played).
            guard let example = record(method, payload) else {
                for await _ in subscription.outcomes {}
                return
            }
            if let error = example.error {
                throw WireError(code: error.code, message: "recorded", isRetryable: error.retryable, details: error.details.map { Array($0.utf8) } ?? [])
            }
            for delivery in try GatewayNotificationsConsumerTests.deliveries(of: example) {
                _ = try await subscription.push(topic: delivery.topic, payload: ByteBuffer(bytes: delivery.event))
            }
            for await outcome in subscription.outcomes {
                state.withLock { $0.settled.append(outcome.disposition) }
            }
        }
    }

    static func deliveries(of example: ContractExample) throws -> [Delivery] {
        let recorded = try JSONSerialization.jsonObject(with: Data((example.response ?? "[]").utf8)) as? [[String: Any]] ?? []
        return try recorded.map { ($0["topic"] as? String ?? "", Array(try JSONSerialization.data(withJSONObject: $0["event"] ?? [:]))) }
    }

    static let examples = Result { try ContractExample.samples(of: ContractExample.load(service: NotificationsContract.serviceName, contractVersion: NotificationsContract.version)) }

    /// Runs `body` with a gateway whose Identity validates any token as a session of `accountId` and whose
    /// Notifications is `standIn`.
    static func withGateway(_ standIn: StandIn, _ body: @escaping @Sendable (GatewayHarness.Running) async throws -> Void) async throws {
        let identity = WireServer(configuration: WireServer.Configuration(port: 0, serverName: IdentityContract.serviceName, secret: WireSecret(GatewayHarness.secret)), logger: GatewayHarness.logger)
        identity.registerRaw(IdentityContract.validateSession.name) { _, _ in
            let info = IdentitySessionInfo(account: IdentityAccountFacts(accountId: standIn.sessionAccount.withLock { $0 }, userId: "user@example.org", isAnonymous: false), sessionId: "session-0", expiresAt: Timestamp(Date().addingTimeInterval(3_600)), privilegedUntil: nil)
            return ByteBuffer(bytes: try JSONEncoder().encode(info))
        }
        let profile = WireServer(configuration: WireServer.Configuration(port: 0, serverName: ProfileContract.serviceName, secret: WireSecret(GatewayHarness.secret)), logger: GatewayHarness.logger)
        profile.registerRaw(HealthContract.check.name) { _, _ in ByteBuffer(string: #"{"service":"profile","checks":[]}"#) }
        let notifications = WireServer(configuration: WireServer.Configuration(port: 0, serverName: NotificationsContract.serviceName, secret: WireSecret(GatewayHarness.secret)), logger: GatewayHarness.logger)
        notifications.registerRaw(NotificationsContract.tailCursor.name) { payload, _ in
            _ = standIn.record(NotificationsContract.tailCursor.name, payload)
            return ByteBuffer(string: standIn.cursor)
        }
        for method in [NotificationsContract.tail.name, NotificationsContract.feed.name] {
            notifications.registerRawSubscription(method) { payload, _, subscription in
                try await standIn.serve(method, payload, subscription)
            }
        }
        let servers = [identity, profile, notifications]
        try await RunningServices.with(servers, logger: GatewayHarness.logger) {
            let configuration = GatewayConfiguration(
                port: 0,
                secret: WireSecret(GatewayHarness.secret),
                identity: .init(host: "127.0.0.1", port: try await identity.localAddress().port!),
                profile: .init(host: "127.0.0.1", port: try await profile.localAddress().port!),
                notifications: .init(host: "127.0.0.1", port: try await notifications.localAddress().port!)
            )
            try await GatewayHarness.withGateway(configuration) { gateway in
                try await body(gateway)
            }
        }
    }

    @Test("the account cache asks for a reader's tail cursor and follows the tail from it as recorded, reading the recorded events")
    func tail() async throws {
        let examples = try Self.examples.get()
        // The gateway's cache tails as a reader that holds a cache: the examples that register one and tail with it.
        let cursor = try #require(examples.first { $0.method == NotificationsContract.tailCursor.name && $0.error == nil && $0.given == nil && $0.request.contains("holdsCache") })
        let tail = try #require(examples.first { $0.method == NotificationsContract.tail.name && $0.error == nil && $0.given == nil && $0.request.contains("readerId") })
        let standIn = StandIn(cursor: try #require(cursor.response))
        standIn.play(tail)
        try await Self.withGateway(standIn) { _ in
            // The cache follows the tail from the gateway's start; it acknowledges each event once it has read it.
            let count = try Self.deliveries(of: tail).count
            try await ContractCondition.waitUntil({ standIn.settled.count == count }, what: "the cache to acknowledge the recorded tail", within: .seconds(20))
            #expect(standIn.received(NotificationsContract.tailCursor.name).first == cursor.request)
            #expect(standIn.received(NotificationsContract.tail.name).first == tail.request, "\(tail.label)")
            #expect(standIn.settled == Array(repeating: .processed, count: count))
        }
    }

    @Test("an account's event stream reads its feed as recorded, and shows the recorded events (reset tokens left out) or the recorded error")
    func feed() async throws {
        let examples = try Self.examples.get().filter { $0.method == NotificationsContract.feed.name }
        // The cursor the gateway starts a new stream after: the one the storage-failure examples record.
        let standIn = StandIn(cursor: #"{"cursor":"0.0"}"#)
        let checked = Mutex(0)
        try await Self.withGateway(standIn) { gateway in
            for example in examples {
                let request = try #require(try JSONSerialization.jsonObject(with: Data(example.request.utf8)) as? [String: Any])
                // A session always names an account: an empty accountId is the provider's to refuse.
                guard let account = request["accountId"] as? String, !account.isEmpty else { continue }
                // The gateway resumes after an event (Last-Event-ID) or starts after a fresh tail cursor: it never asks
                // for an account's whole history.
                guard request["after"] != nil || request["afterCursor"] != nil else { continue }
                // A cursor captured from the provider's own tailCursor answer is the provider's to check; the gateway
                // sends the one its stand-in gave.
                if let cursor = request["afterCursor"] as? String, cursor != "0.0" { continue }
                // A token of its own: the gateway caches which account a token is a session of.
                standIn.sessionAccount.withLock { $0 = account }
                standIn.play(example)
                let reader = GatewayEventStreamTests.StreamReader()
                let (status, task) = try await GatewayEventStreamTests.open(gateway, token: "token-of-\(example.name)", lastEventID: request["after"] as? String, into: reader)
                defer { task.cancel() }
                #expect(status == 200, "\(example.label)")
                let recorded = try Self.deliveries(of: example)
                try await GatewayEventStreamTests.until(reader, "\(example.label)") { events, _ in
                    example.error == nil ? events.count == recorded.count : events.contains { $0.event == "error" }
                }
                let events = await reader.events
                #expect(standIn.received(NotificationsContract.feed.name) == [example.request], "\(example.label)")
                if let error = example.error {
                    #expect(events.last?.event == "error" && events.last?.object["code"] as? String == error.code.rawValue, "\(example.label): \(events.map(\.data))")
                } else {
                    #expect(events.map(\.event) == recorded.map(\.topic), "\(example.label)")
                    for (shown, delivery) in zip(events, recorded) {
                        var event = try #require(try JSONSerialization.jsonObject(with: Data(delivery.event)) as? [String: Any])
                        // The gateway never shows a reset token to the account's apps, even sealed: it is for the mail sender.
                        #expect(event["sealedToken"] != nil || delivery.topic != "passwordResetRequested")
                        event["sealedToken"] = nil
                        #expect(try ContractExample.canonical(shown.object) == ContractExample.canonical(event), "\(example.label)")
                    }
                }
                checked.withLock { $0 += 1 }
            }
        }
        #expect(checked.withLock { $0 } >= 4)
    }
}
