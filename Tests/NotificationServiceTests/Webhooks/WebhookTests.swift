import Foundation
import KontoContracts
import KontoModel
import KontoRuntime
import KontoTestSupport
import KontoWire
@testable import NotificationService
import NIOHTTP1
import Testing

@Suite("Webhooks", .timeLimit(.minutes(2)))
struct WebhookTests {
    typealias Harness = NotificationServiceHarness
    static let secretText = "whsec_a29udG8td2ViaG9vay10ZXN0cy1zZWNyZXQtMDEyMzQ1Njc4OQ=="
    static let rotatedText = "whsec_a29udG8td2ViaG9vay10ZXN0cy1yb3RhdGVkLTAxMjM0NTY3ODk="
    static let secret = try! WebhookSecret(secretText)
    static let rotated = try! WebhookSecret(rotatedText)
    static let otherText = "whsec_a29udG8td2ViaG9vay10ZXN0cy1vdGhlci0wMTIzNDU2Nzg5"
    static let other = try! WebhookSecret(otherText)

    @Test("the signature of Standard Webhooks' own example: key is the base64-decoded secret, v1,<base64>")
    func knownAnswer() throws {
        let secret = try WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = WebhookSignature.sign(secret: secret, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(WebhookSignature.verify(secret: secret, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, signature: signature, now: Date(timeIntervalSince1970: 1_614_265_330)))
        #expect([WebhookSignature.idHeader, WebhookSignature.timestampHeader, WebhookSignature.signatureHeader] == ["webhook-id", "webhook-timestamp", "webhook-signature"])
    }

    @Test("a signature verifies; a tampered body or id, an old timestamp, another secret or a malformed signature do not")
    func signatures() {
        let body = Array(#"{"id":"e1"}"#.utf8)
        let now = Date()
        let timestamp = Int64(now.timeIntervalSince1970)
        let signature = WebhookSignature.sign(secret: Self.secret, id: "e1", timestamp: timestamp, body: body)
        #expect(signature.hasPrefix("v1,") && signature.count == 3 + 44)
        #expect(WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body, signature: signature, now: now))
        #expect(WebhookSignature.verify(secret: Self.secretText, id: "e1", timestamp: timestamp, body: body, signature: signature, now: now))
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: Array(#"{"id":"e2"}"#.utf8), signature: signature, now: now))
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body + [0x20], signature: signature, now: now))
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e2", timestamp: timestamp, body: body, signature: signature, now: now))
        #expect(!WebhookSignature.verify(secret: Self.other, id: "e1", timestamp: timestamp, body: body, signature: signature, now: now))
        #expect(!WebhookSignature.verify(secret: "not-a-secret", id: "e1", timestamp: timestamp, body: body, signature: signature, now: now))
        // Replayed ten minutes later: the timestamp is out of tolerance, and signing a new one needs the secret.
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body, signature: signature, now: now.addingTimeInterval(600)))
        let old = timestamp - 600
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: old, body: body, signature: WebhookSignature.sign(secret: Self.secret, id: "e1", timestamp: old, body: body), now: now))
        for malformed in ["", "v1,", "v1,!!", "v2," + signature.dropFirst(3), "v1=" + signature.dropFirst(3), String(signature.dropLast(4))] {
            #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body, signature: malformed, now: now))
        }
        // An unreadable or foreign entry beside a good one is skipped, as the specification asks.
        #expect(WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body, signature: "v2,abc v1,!! " + signature, now: now))
    }

    @Test("extreme timestamps are refused, never trapped on", arguments: [Int64.min, Int64.min + 1, -1, 0, Int64.max - 1, Int64.max])
    func extremeTimestamps(timestamp: Int64) {
        let body = Array("{}".utf8)
        let signature = WebhookSignature.sign(secret: Self.secret, id: "e1", timestamp: timestamp, body: body)
        // The old code computed Int64(now) - timestamp, which overflows (a trap) for Int64.min and, at a `now` before
        // 1970, for Int64.max.
        for now in [Date(), Date(timeIntervalSince1970: -1_000), Date.distantPast, Date.distantFuture] {
            #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body, signature: signature, now: now))
        }
    }

    @Test("during a rotation one signature per secret, space-separated: the old and the new secret each verify it")
    func rotationSignatures() {
        let body = Array(#"{"id":"e1"}"#.utf8)
        let now = Date()
        let timestamp = Int64(now.timeIntervalSince1970)
        let header = WebhookSignature.sign(secrets: [Self.rotated, Self.secret], id: "e1", timestamp: timestamp, body: body)
        let parts = header.split(separator: " ").map(String.init)
        #expect(parts == [
            WebhookSignature.sign(secret: Self.rotated, id: "e1", timestamp: timestamp, body: body),
            WebhookSignature.sign(secret: Self.secret, id: "e1", timestamp: timestamp, body: body),
        ])
        #expect(WebhookSignature.verify(secret: Self.rotated, id: "e1", timestamp: timestamp, body: body, signature: header, now: now))
        #expect(WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body, signature: header, now: now))
        #expect(!WebhookSignature.verify(secret: Self.other, id: "e1", timestamp: timestamp, body: body, signature: header, now: now))
        #expect(!WebhookSignature.verify(secret: Self.secret, id: "e1", timestamp: timestamp, body: body + [0x20], signature: header, now: now))
    }

    @Test("secrets: whsec_ and base64 of at least 24 bytes, each refusal with its code; never shown")
    func secretFormats() throws {
        let cases: [(String, WebhookSecretError.Code)] = [
            ("a29udG8td2ViaG9vay10ZXN0cy1zZWNyZXQtMDEyMzQ1Njc4OQ==", .missingPrefix),
            ("whsec-a29udG8td2ViaG9vay10ZXN0cy1zZWNyZXQtMDEyMzQ1Njc4OQ==", .missingPrefix),
            ("WHSEC_a29udG8td2ViaG9vay10ZXN0cy1zZWNyZXQtMDEyMzQ1Njc4OQ==", .missingPrefix),
            ("whsec_", .tooShort),
            ("whsec_not base64 at all!", .notBase64),
            ("whsec_a29udG8td2ViaG9vay10ZXN0cy1zZWNyZXQtMDEyMzQ1Njc4OQ==x", .notBase64),
            ("whsec_" + String(repeating: "A", count: 33), .notBase64), // 4n + 1 characters: never base64
            ("whsec_eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHg=", .tooShort), // 23 bytes
        ]
        for (text, code) in cases {
            #expect(throws: WebhookSecretError(code), "\(text)") { try WebhookSecret(text) }
            let error = try #require(throws: WebhookSecretError.self) { try WebhookSecret(text) }
            #expect(!"\(error)".contains("a29udG8") && !"\(error)".contains("eHh4"))
        }
        #expect(try WebhookSecret("whsec_" + Data(repeating: 7, count: 24).base64EncodedString()) != Self.secret)
        // Unpadded, as Standard Webhooks' libraries accept it: the same key.
        #expect(try WebhookSecret("whsec_a29udG8td2ViaG9vay10ZXN0cy1zZWNyZXQtMDEyMzQ1Njc4OQ") == Self.secret)
        for shown in ["\(Self.secret)", String(reflecting: Self.secret), { var text = ""; dump(Self.secret, to: &text); return text }()] {
            #expect(!shown.contains(Self.secretText) && !shown.contains("a29udG8"), "\(shown)")
        }
    }

    @Test("endpoint configuration problems are all named, each with its webhook")
    func configuration() {
        let url = URL(string: "https://mail.example.org/hook")!
        let good = WebhookEndpoint(name: "mailer", url: url, secret: Self.secretText, types: ["passwordResetRequested"])
        let rotating = WebhookEndpoint(name: "audit", url: url, secret: Self.secretText, secrets: [Self.rotatedText])
        let listOnly = WebhookEndpoint(name: "audit2", url: url, secrets: [Self.rotatedText, Self.secretText])
        let local = WebhookEndpoint(name: "local", url: URL(string: "http://127.0.0.1:9/hook")!, secret: Self.secretText, insecure: true)
        #expect(WebhookEndpoint.problems([good, rotating, listOnly, local]).isEmpty)
        #expect(rotating.signingSecrets == [Self.secret, Self.rotated])
        #expect(listOnly.signingSecrets == [Self.rotated, Self.secret])

        func problems(_ endpoint: WebhookEndpoint) -> [String] { WebhookEndpoint.problems([endpoint]) }
        func endpoint(url: String = "https://h/x", secret: String? = nil, secrets: [String]? = nil, insecure: Bool = false) -> WebhookEndpoint {
            WebhookEndpoint(name: "hook", url: URL(string: url)!, secret: secret, secrets: secrets, insecure: insecure)
        }
        let cases: [(WebhookEndpoint, String)] = [
            (endpoint(url: "http://127.0.0.1:9/hook", secret: Self.secretText), "webhook 'hook' (1): url is http://"),
            (endpoint(url: "http://mail.example.org/hook", secret: Self.secretText), "set insecure: true"),
            (endpoint(url: "ftp://h/x", secret: Self.secretText, insecure: true), "url must be an https URL"),
            (endpoint(), "webhook 'hook' (1): secret (or secrets) is missing"),
            (endpoint(secrets: []), "secret (or secrets) is missing"),
            (endpoint(secret: "whsec-0123456789abcdef"), "webhook 'hook' (1): secret does not start with whsec_ (webhooks.secretMissingPrefix)"),
            (endpoint(secret: "whsec_c2hvcnQ="), "secret decodes to fewer than 24 bytes (webhooks.secretTooShort)"),
            (endpoint(secret: "whsec_%%%"), "secret is not whsec_ followed by base64 (webhooks.secretNotBase64)"),
            (endpoint(secret: Self.secretText, secrets: ["replace-me"]), "secret 2 of 2 does not start with whsec_"),
            (endpoint(secrets: [Self.secretText, Self.secretText]), "a secret is listed twice"),
        ]
        for (endpoint, expected) in cases {
            let found = problems(endpoint)
            #expect(found.count == 1 && found[0].contains(expected), "\(found)")
            // A problem line never repeats a secret.
            #expect(!found.joined().contains(Self.secretText) && !found.joined().contains("c2hvcnQ") && !found.joined().contains("replace-me"))
        }
        let several = WebhookEndpoint.problems([
            good,
            WebhookEndpoint(name: "mailer", url: URL(string: "ftp://x")!, secret: "short", types: ["noSuchEvent"]),
            WebhookEndpoint(name: "bad name!", url: URL(string: "http://h")!, secret: Self.secretText, types: []),
        ])
        #expect(several.count == 7, "\(several)")
        #expect(several.first?.hasPrefix("webhook 'mailer' (2)") == true && several.last?.hasPrefix("webhook 3") == true, "\(several)")
        for shown in ["\(rotating)", String(reflecting: rotating), { var text = ""; dump(rotating, to: &text); return text }()] {
            #expect(!shown.contains(Self.secretText) && !shown.contains(Self.rotatedText), "\(shown)")
        }
    }

    @Test("a webhooks file: the rotation shape reads; a bad secret or http without insecure refuses the start, naming the webhook")
    func files() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("konto-webhooks-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
        - name: mailer
          url: https://mailer.example.org/konto/events
          secrets: [\(Self.rotatedText), \(Self.secretText)]
          types: [passwordResetRequested]
        - name: local
          url: http://127.0.0.1:8080/events
          secret: \(Self.secretText)
          insecure: true
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let endpoints = try WebhookEndpoint.load(path: path)
        #expect(endpoints.map(\.signingSecrets) == [[Self.rotated, Self.secret], [Self.secret]])
        #expect(endpoints.map(\.insecure) == [false, true])

        try """
        - name: mailer
          url: http://mailer.example.org/konto/events
          secret: whsec-0123456789abcdef
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let error = try #require(throws: ServiceEnvironmentError.self) { try WebhookEndpoint.load(path: path) }
        #expect("\(error)".contains("webhook 'mailer' (1): url is http://"), "\(error)")
        #expect("\(error)".contains("webhook 'mailer' (1): secret does not start with whsec_"), "\(error)")
        #expect(!"\(error)".contains("0123456789abcdef"))

        // deploy/webhooks.example.yaml reads, and its only problem is the placeholder secret it asks to replace.
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("deploy/webhooks.example.yaml").path
        let exampleError = try #require(throws: ServiceEnvironmentError.self) { try WebhookEndpoint.load(path: example) }
        #expect("\(exampleError)".hasSuffix("webhooks.example.yaml: webhook 'mailer' (1): secret is not whsec_ followed by base64 (webhooks.secretNotBase64); write whsec_ followed by the base64 of at least 24 random bytes"), "\(exampleError)")

        // Configured in code, the server refuses it as well.
        let insecure = WebhookEndpoint(name: "mailer", url: URL(string: "http://127.0.0.1:9/x")!, secret: Self.secretText)
        #expect(throws: ServiceEnvironmentError.self) {
            _ = try NotificationServer(configuration: NotificationServiceConfiguration(secret: WireSecret(Harness.secret), webhooks: [insecure]), logger: Harness.logger)
        }
    }

    static func withWebhooks(_ kind: NotificationStorageKind, receiver: WebhookReceiver, types: [String]? = nil, _ body: @escaping @Sendable (NotificationServiceHarness.Running) async throws -> Void) async throws {
        // A receiver on loopback, so http is allowed by insecure: true.
        let endpoint = WebhookEndpoint(name: "mailer", url: URL(string: "http://127.0.0.1:\(receiver.port)/konto")!, secret: Self.secretText, types: types, insecure: true)
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

    @Test("a delivery that gets no answer (nothing listens) is recorded as one coarse class, never how the connection failed (no port-scan oracle)", arguments: NotificationStorageKind.allCases)
    func noAnswerIsCoarse(kind: NotificationStorageKind) async throws {
        let port = try FreePort.loopback()
        let endpoint = WebhookEndpoint(name: "mailer", url: URL(string: "http://127.0.0.1:\(port)/konto")!, secret: Self.secretText, insecure: true)
        try await Harness.withService(kind, webhooks: [endpoint]) { running in
            let client = running.client()
            try await Harness.with(client) {
                _ = try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: "webhook:mailer"))
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [Harness.event("a1", .deletingAccount)]))
                var failed: [NotificationsFailedDelivery] = []
                let deadline = ContinuousClock.now + .seconds(60)
                while failed.isEmpty, ContinuousClock.now < deadline {
                    failed = try await client.call(NotificationsContract.failedDeliveries, NotificationsDeadLettersRequest(group: "webhook:mailer")).deliveries
                    if failed.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(failed.first?.lastError == "no answer (connection failed, timed out or TLS failed)", "\(failed)")
            }
        }
    }

    @Test("an endpoint that keeps failing: the event goes to the endpoint's dead letters after the last attempt; the admin API's listing shows it without its content, and a redelivery delivers it", arguments: NotificationStorageKind.allCases)
    func deadLetters(kind: NotificationStorageKind) async throws {
        // Fails every attempt, then accepts (the redelivery).
        let receiver = try await WebhookReceiver.start(statuses: Array(repeating: .serviceUnavailable, count: Harness.quickOptions.maxAttempts) + [.noContent])
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

                // What the admin API shows of it: which event, whose, how often tried, why given up; not its content.
                let failed = try await client.call(NotificationsContract.failedDeliveries, NotificationsDeadLettersRequest(group: "webhook:mailer")).deliveries
                #expect(failed.map(\.eventId) == [event.id] && failed.first?.type == "deletingAccount" && failed.first?.accountId == "a1")
                #expect(failed.first?.attempts == Harness.quickOptions.maxAttempts && failed.first?.lastError == "HTTP 503" && failed.first?.message == nil)
                // Only Notifications' own deliveries: another group's dead letters are its owner's.
                let other = await #expect(throws: WireError.self) {
                    _ = try await client.call(NotificationsContract.failedDeliveries, NotificationsDeadLettersRequest(group: "profile-deletions"))
                }
                #expect(other?.code == .notificationsInvalidRequest)
                let replayed = try await client.call(NotificationsContract.redeliver, NotificationsReplayDeadLettersRequest(group: "webhook:mailer", eventIds: [event.id]))
                #expect(replayed.replayed == 1)
                await receiver.waitForRequests(Harness.quickOptions.maxAttempts + 1)
                #expect(receiver.requests.count == Harness.quickOptions.maxAttempts + 1)
                #expect(receiver.requests.last?.headers.first(name: WebhookSignature.idHeader) == event.id.uuidString)
            }
        }
        await receiver.stop()
    }
}
