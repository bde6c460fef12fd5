import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
@testable import NotificationService
import NIOHTTP1
import Testing

/// A reset token is stored only sealed; the dispatcher opens it for the endpoint that delivers it, and for no other.
@Suite("Webhooks: reset tokens", .timeLimit(.minutes(2)))
struct WebhookResetTokenTests {
    typealias Harness = NotificationServiceHarness

    static func resetEvent(accountId: String, token: String, secret: String = Harness.secret) -> AccountEvent {
        AccountEvent(accountId: accountId, kind: .passwordResetRequested(
            userId: "ada@example.org",
            token: ResetTokenSeal(secret: WireSecret(secret)).seal(token, accountId: accountId),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_000)
        ))
    }

    @Test("an endpoint that takes every type gets a reset event without the token, sealed or not", arguments: NotificationStorageKind.allCases)
    func everyTypeEndpointGetsNoToken(kind: NotificationStorageKind) async throws {
        let receiver = try await WebhookReceiver.start(statuses: [.noContent])
        try await WebhookTests.withWebhooks(kind, receiver: receiver) { running in
            let client = running.client()
            try await Harness.with(client) {
                _ = try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "webhook:mailer"))
                let event = Self.resetEvent(accountId: "a1", token: "reset-for-nobody")
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [event]))
                await receiver.waitForRequests(1)
                let body = try #require(receiver.requests.first?.body)
                let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
                #expect(object["type"] as? String == "passwordResetRequested")
                #expect(object["token"] == nil && object["sealedToken"] == nil)
                #expect(!String(decoding: body, as: UTF8.self).contains("reset-for-nobody"))
            }
        }
        await receiver.stop()
    }

    @Test("a mail request reaches a webhook that takes every type without its sealed secret")
    func mailRequestWithoutSecret() throws {
        let event = AccountEvent(accountId: "a1", kind: .mailRequested(MailRequest(
            message: .signInCode, to: "ada@example.org", sealedToken: ResetTokenSeal(secret: WireSecret(Harness.secret)).seal("12345678", accountId: "a1")
        )))
        let endpoint = WebhookEndpoint(name: "audit", url: URL(string: "https://audit.example.org")!)
        let body = try WebhookDispatcher.body(for: event, to: endpoint, seal: ResetTokenSeal(secret: WireSecret(Harness.secret)))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(object["type"] as? String == "mailRequested" && object["to"] as? String == "ada@example.org")
        #expect(object["sealedToken"] == nil && object["token"] == nil)
        #expect(!String(decoding: body, as: UTF8.self).contains("12345678"))
    }

    @Test("a token sealed with another deployment's secret is never sent: the event ends in dead letters", arguments: NotificationStorageKind.allCases)
    func foreignSealIsNotDelivered(kind: NotificationStorageKind) async throws {
        let receiver = try await WebhookReceiver.start(statuses: [.noContent])
        try await WebhookTests.withWebhooks(kind, receiver: receiver, types: ["passwordResetRequested"]) { running in
            let client = running.client()
            try await Harness.with(client) {
                _ = try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "webhook:mailer", types: ["passwordResetRequested"]))
                let event = Self.resetEvent(accountId: "a1", token: "forged", secret: "another deployment's secret 0123456789")
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [event]))
                var letters: [NotificationsDeadLetter] = []
                while letters.isEmpty {
                    letters = try await client.call(NotificationsContract.deadLetters, NotificationsDeadLettersRequest(group: "webhook:mailer")).letters
                    try await Task.sleep(for: .milliseconds(20))
                }
                #expect(letters.map(\.event.id) == [event.id])
                #expect(letters.first?.lastError == "ResetTokenSealError")
                #expect(receiver.requests.isEmpty)
            }
        }
        await receiver.stop()
    }
}
