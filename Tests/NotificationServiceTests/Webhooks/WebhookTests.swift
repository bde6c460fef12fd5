import Foundation
import KontoContracts
import KontoModel
import KontoTesting
import KontoWire
@testable import NotificationService
import NIOHTTP1
import Testing

@Suite("Webhooks", .timeLimit(.minutes(2)))
struct WebhookTests {
    typealias Harness = NotificationServiceHarness
    static let secret = "whsec-0123456789abcdef"

    @Test("a signature verifies; a changed body, an old timestamp, another secret or a malformed signature do not")
    func signatures() {
        let body = Array(#"{"id":"e1"}"#.utf8)
        let now = Date()
        let timestamp = Int64(now.timeIntervalSince1970)
        let signature = WebhookSignature.sign(secret: Self.secret, id: "e1", timestamp: timestamp, body: body)
        #expect(signature.hasPrefix("v1=") && signature.count == 3 + 64)
        #expect(WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body, signature: signature, now: now))
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: Array(#"{"id":"e2"}"#.utf8), signature: signature, now: now))
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e2", timestamp: timestamp, body: body, signature: signature, now: now))
        #expect(!WebhookSignature.verify(secret: "another-secret-of-16-bytes", id: "e1", timestamp: timestamp, body: body, signature: signature, now: now))
        // Replayed ten minutes later: the timestamp is out of tolerance, and signing a new one needs the secret.
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body, signature: signature, now: now.addingTimeInterval(600)))
        let old = timestamp - 600
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: old, body: body, signature: WebhookSignature.sign(secret: Self.secret, id: "e1", timestamp: old, body: body), now: now))
        for malformed in ["", "v1=", "v1=zz", "v2=" + signature.dropFirst(3), String(signature.dropLast(2))] {
            #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body, signature: malformed, now: now))
        }
    }

    @Test("endpoint configuration problems are all named")
    func configuration() {
        let good = WebhookEndpoint(name: "mailer", url: URL(string: "https://mail.example.org/hook")!, secret: Self.secret, types: ["passwordResetRequested"])
        #expect(WebhookEndpoint.problems([good]).isEmpty)
        let problems = WebhookEndpoint.problems([
            good,
            WebhookEndpoint(name: "mailer", url: URL(string: "ftp://x")!, secret: "short", types: ["noSuchEvent"]),
            WebhookEndpoint(name: "bad name!", url: URL(string: "http://h")!, secret: Self.secret, types: []),
        ])
        #expect(problems.count == 6, "\(problems)")
        #expect(!"\(good)".contains(Self.secret))
    }

    static func withWebhooks(_ kind: NotificationStorageKind, receiver: WebhookReceiver, types: [String]? = nil, _ body: @escaping @Sendable (NotificationServiceHarness.Running) async throws -> Void) async throws {
        let endpoint = WebhookEndpoint(name: "mailer", url: URL(string: "http://127.0.0.1:\(receiver.port)/konto")!, secret: Self.secret, types: types)
        try await Harness.withService(kind, webhooks: [endpoint], body)
    }

    @Test("an endpoint that fails twice then succeeds gets the event three times, same id, each validly signed; the log has every attempt", arguments: NotificationStorageKind.allCases)
    func retriesUntilAccepted(kind: NotificationStorageKind) async throws {
        let receiver = try await WebhookReceiver.start(statuses: [.internalServerError, .badGateway, .noContent])
        try await Self.withWebhooks(kind, receiver: receiver, types: ["passwordResetRequested"]) { running in
            let client = running.client()
            try await Harness.with(client) {
                // The dispatcher declares its group when it starts; declaring here too makes the publish safe to race it.
                _ = try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "webhook:mailer", types: ["passwordResetRequested"]))
                let event = AccountEvent(accountId: "a1", kind: .passwordResetRequested(userId: "ada@example.org", token: ResetTokenSeal(secret: WireSecret(Harness.secret)).seal("reset-1", accountId: "a1"), expiresAt: Date(timeIntervalSince1970: 1_800_000_000)))
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [Harness.event("a1"), event]))
                await receiver.waitForRequests(3)
                let requests = receiver.requests
                #expect(requests.count == 3)
                for request in requests {
                    let id = try #require(request.headers.first(name: WebhookSignature.idHeader))
                    let timestamp = try #require(request.headers.first(name: WebhookSignature.timestampHeader).flatMap { Int64($0) })
                    let signature = try #require(request.headers.first(name: WebhookSignature.signatureHeader))
                    #expect(id == event.id.uuidString)
                    #expect(WebhookSignature.verify(secret: Self.secret, id: id, timestamp: timestamp, body: request.body, signature: signature))
                    // The mail sender gets the token opened, and nothing sealed.
                    let object = try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any]
                    #expect(object?["type"] as? String == "passwordResetRequested" && object?["userId"] as? String == "ada@example.org")
                    #expect(object?["token"] as? String == "reset-1")
                    #expect(object?["sealedToken"] == nil)
                    #expect(request.headers.first(name: "Content-Type") == "application/json")
                }
                // The log is written after each answer: wait for the third entry.
                var log: [WebhookAttempt] = []
                while log.count < 3 {
                    log = try await running.server.store.storage.webhookAttempts(endpoint: "mailer", limit: 10)
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(log.map(\.statusCode) == [204, 502, 500])
                #expect(log.map(\.attempt) == [3, 2, 1])
                #expect(log.allSatisfy { $0.eventId == event.id })
                #expect(log.first?.error == nil && log.last?.error == "HTTP 500")
            }
        }
        await receiver.stop()
    }

    @Test("an endpoint that keeps failing: the event goes to the endpoint's dead letters after the last attempt", arguments: NotificationStorageKind.allCases)
    func deadLetters(kind: NotificationStorageKind) async throws {
        let receiver = try await WebhookReceiver.start(statuses: [.serviceUnavailable])
        try await Self.withWebhooks(kind, receiver: receiver) { running in
            let client = running.client()
            try await Harness.with(client) {
                _ = try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "webhook:mailer"))
                let event = Harness.event("a1", .deletingAccount)
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [event]))
                var letters: [NotificationsDeadLetter] = []
                while letters.isEmpty {
                    letters = try await client.call(NotificationsContract.deadLetters, NotificationsDeadLettersRequest(group: "webhook:mailer")).letters
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(letters.map(\.event) == [event])
                #expect(letters.first?.attempts == Harness.quickOptions.maxAttempts)
                #expect(letters.first?.lastError == "HTTP 503")
                #expect(receiver.requests.count == Harness.quickOptions.maxAttempts)
            }
        }
        await receiver.stop()
    }
}
