import Foundation
import KontoContracts
import KontoMail
import KontoModel
import KontoRuntime
import KontoTestSupport
import KontoWire
import AsyncHTTPClient
import Logging
import MetricsTestKit
import NIOCore
import NIOHTTP1
@testable import NotificationService
import Testing

/// The courier against a real SMTP server (aiosmtpd, through KontoTestSupport's MailCatcher) on both storages: what
/// arrives is judged by Python's `email` package; refusals are retried or dead-lettered as the issue says.
@Suite("Mail: the courier", .timeLimit(.minutes(3)))
struct MailCourierTests {
    static let enabled = MailCatcher.python != nil || ProcessInfo.processInfo.environment["CI"] != nil
    static let secret = WireSecret(String(repeating: "c0ffee", count: 11))
    static let seal = ResetTokenSeal(secret: secret)
    static let publicURL = "https://accounts.example.org"
    static let logger = Logger(label: "test.mail.courier")

    struct Courier {
        let store: NotificationStore
        let catcher: MailCatcher
        let metrics: TestMetrics

        func publish(_ events: [AccountEvent]) async throws {
            _ = try await store.publish(NotificationsPublishRequest(events: events))
        }

        func counter(_ label: String) -> Int64 {
            (try? metrics.expectCounter(label).totalValue) ?? 0
        }

        /// The counter once it reaches `value` (a mail is counted once its outcome is stored, just after the server
        /// answered), or as it is after a bound.
        func counter(_ label: String, reaching value: Int64) async -> Int64 {
            let deadline = ContinuousClock.now + .seconds(10)
            while counter(label) < value, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            return counter(label)
        }

        /// Waits (bounded) until `count` deliveries of the group have been dead-lettered.
        func deadLetters(_ count: Int) async throws -> [DeadLetter] {
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let letters = try await store.storage.deadLetters(group: MailCourier.group, limit: 100)
                if letters.count >= count || ContinuousClock.now > deadline { return letters }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Runs a courier (its own SMTP server in `mode`) over a fresh storage of `kind` for `body`.
    static func withCourier(
        _ kind: NotificationStorageKind, mode: String = "plain", templates: MailTemplates = .builtIn,
        _ body: (Courier) async throws -> Void
    ) async throws {
        let catcher = try await MailCatcher.start(mode: mode)
        do {
            try await kind.withStorage { storage in
                var options = NotificationOptions()
                options.retryBase = .milliseconds(20)
                options.pollInterval = .milliseconds(100)
                options.maxAttempts = 4
                let store = NotificationStore(storage: storage, options: options, logger: logger)
                var smtp = SMTPClient.Configuration(host: "127.0.0.1", port: catcher.port, security: .none)
                smtp.timeout = .seconds(10)
                let settings = MailSettings(smtp: smtp, from: try MailAddress("accounts@example.org"), fromName: "Example Accounts", publicURL: publicURL, templates: templates)
                let metrics = TestMetrics()
                let courier = try MailCourier(store: store, settings: settings, seal: seal, metricsFactory: metrics, logger: logger)
                // The courier declares its group as it starts; declaring it here too makes the publishes safe to race that.
                _ = try await store.declareGroup(NotificationsSubscribeRequest(group: MailCourier.group, types: ["mailRequested"]))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await courier.run() }
                    defer { group.cancelAll() }
                    try await body(Courier(store: store, catcher: catcher, metrics: metrics))
                }
            }
        } catch {
            await catcher.stop()
            throw error
        }
        await catcher.stop()
    }

    static func request(_ accountId: String, _ message: MailRequest.Message, to: String = "ada@example.org", secret: String? = nil, expiresIn: TimeInterval? = nil, values: [String: String] = [:]) -> AccountEvent {
        AccountEvent(accountId: accountId, kind: .mailRequested(MailRequest(
            message: message, to: to, sealedToken: secret.map { seal.seal($0, accountId: accountId) },
            expiresAt: expiresIn.map { Date().addingTimeInterval($0) }, values: values
        )))
    }

    @Test("every message arrives as correct MIME (Python's email reads it without a defect): the reset link works, notices name what changed",
          .enabled(if: enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"), arguments: NotificationStorageKind.allCases)
    func messages(kind: NotificationStorageKind) async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        try await Self.withCourier(kind) { courier in
            let reset = Self.request("acc-1", .passwordReset, secret: "reset-Token_1", expiresIn: 3_600)
            let events = [
                reset,
                Self.request("acc-2", .verifyEmail, to: "bob@example.org", secret: "verify-2", expiresIn: 86_400),
                Self.request("acc-3", .signInCode, to: "cleo@example.org", secret: "12345678", expiresIn: 600),
                Self.request("acc-4", .passwordChanged, to: "dan@example.org"),
                Self.request("acc-5", .emailChanged, to: "old@example.org"),
                Self.request("acc-6", .factorAdded, to: "eve@example.org", values: ["factorType": "totp"]),
                Self.request("acc-7", .factorRemoved, to: "fay@example.org", values: ["factorType": "passkey"]),
            ]
            try await courier.publish(events)
            let mails = await courier.catcher.waitForMails(events.count)
            try #require(mails.count == events.count, "\(mails.map(\.subject))")
            for mail in mails {
                #expect(mail.defects.isEmpty, "\(mail.subject): \(mail.defects)")
                #expect(mail.from == "accounts@example.org" && mail.fromHeader == "Example Accounts <accounts@example.org>")
                #expect(mail.text?.isEmpty == false && mail.html?.contains("<p>") == true)
            }
            let byRecipient = Dictionary(uniqueKeysWithValues: mails.map { ($0.to.first ?? "", $0) })
            let resetMail = try #require(byRecipient["ada@example.org"])
            #expect(resetMail.subject == "Reset your password")
            #expect(resetMail.link(containing: "/account/reset/confirm") == Self.publicURL + "/account/reset/confirm?token=reset-Token_1")
            #expect(resetMail.html?.contains("href=\"\(Self.publicURL)/account/reset/confirm?token=reset-Token_1\"") == true)
            // The event's id names the message, so a retry is recognisably the same mail.
            #expect(resetMail.messageId == "<\(reset.id.uuidString.lowercased())@example.org>")
            #expect(byRecipient["bob@example.org"]?.link(containing: "/account/verify") == Self.publicURL + "/account/verify?token=verify-2")
            #expect(byRecipient["cleo@example.org"]?.text?.contains("12345678") == true && byRecipient["cleo@example.org"]?.text?.contains("10 minutes") == true)
            #expect(byRecipient["dan@example.org"]?.subject == "Your password was changed")
            #expect(byRecipient["dan@example.org"]?.link(containing: "/account/reset") == Self.publicURL + "/account/reset")
            #expect(byRecipient["old@example.org"]?.text?.contains("no longer signs in as old@example.org") == true)
            #expect(byRecipient["eve@example.org"]?.text?.hasPrefix("An authenticator app was added") == true)
            #expect(byRecipient["fay@example.org"]?.text?.hasPrefix("A passkey was removed") == true)
            // No secret in clear outside the mail itself: the stored event keeps it sealed.
            #expect(!String(describing: reset).contains("reset-Token_1"))
            #expect(await courier.counter("konto_mail_sent_total", reaching: Int64(events.count)) == Int64(events.count))
        }
    }

    @Test("a 451 is retried with back-off and the same mail then arrives once",
          .enabled(if: enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"), arguments: NotificationStorageKind.allCases)
    func retried(kind: NotificationStorageKind) async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        try await Self.withCourier(kind, mode: "flaky") { courier in
            let event = Self.request("acc-1", .passwordChanged)
            try await courier.publish([event])
            let mails = await courier.catcher.waitForMails(1)
            #expect(mails.map(\.messageId) == ["<\(event.id.uuidString.lowercased())@example.org>"])
            #expect(courier.counter("konto_mail_retried_total") == 1)
            #expect(await courier.counter("konto_mail_sent_total", reaching: 1) == 1)
            #expect(try await courier.store.storage.deadLetters(group: MailCourier.group, limit: 10).isEmpty)
        }
    }

    @Test("a 550 dead-letters at once, and so does a request no mail can come of: an address with a header in it, a message without templates, a secret sealed elsewhere, an expired link",
          .enabled(if: enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"), arguments: NotificationStorageKind.allCases)
    func deadLettered(kind: NotificationStorageKind) async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        try await Self.withCourier(kind, mode: "reject-rcpt") { courier in
            try await courier.publish([Self.request("acc-1", .passwordChanged)])
            let refused = try await courier.deadLetters(1)
            #expect(refused.count == 1 && refused.first?.attempts == 1 && refused.first?.lastError?.contains("550") == true, "\(refused)")
        }
        try await Self.withCourier(kind) { courier in
            let foreign = ResetTokenSeal(secret: WireSecret(String(repeating: "0d15ea5e", count: 8)))
            let events = [
                Self.request("acc-1", .passwordChanged, to: "ada@example.org\r\nBcc: eve@example.org"),
                Self.request("acc-2", MailRequest.Message(rawValue: "newsletter"), to: "bob@example.org"),
                AccountEvent(accountId: "acc-3", kind: .mailRequested(MailRequest(message: .passwordReset, to: "cleo@example.org", sealedToken: foreign.seal("t", accountId: "acc-3"), expiresAt: Date().addingTimeInterval(600)))),
                Self.request("acc-4", .passwordReset, to: "dan@example.org", secret: "t", expiresIn: -1),
            ]
            try await courier.publish(events)
            let letters = try await courier.deadLetters(events.count)
            #expect(Set(letters.map(\.event.id)) == Set(events.map(\.id)))
            #expect(letters.allSatisfy { $0.attempts == 1 }, "\(letters.map(\.lastError))")
            #expect(courier.catcher.mails.isEmpty)
            #expect(await courier.counter("konto_mail_dead_lettered_total", reaching: Int64(events.count)) == Int64(events.count))
        }
    }

    @Test("an operator's template replaces the built-in one; no value reaches a header, even through a subject that shows it",
          .enabled(if: enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func operatorTemplates() async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("konto-mail-templates-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "{{factor}} — added\r\nBcc: eve@example.org".write(to: directory.appendingPathComponent("factorAdded.subject.mustache"), atomically: true, encoding: .utf8)
        try "<p>Added: {{factor}} & more</p>".write(to: directory.appendingPathComponent("factorAdded.html.mustache"), atomically: true, encoding: .utf8)
        let templates = try MailTemplates(directory: directory.path)
        try await Self.withCourier(.inMemory, templates: templates) { courier in
            // The operator's subject has a line break in it: it must not become a header.
            try await courier.publish([Self.request("acc-1", .factorAdded, values: ["factorType": "totp"])])
            let mails = await courier.catcher.waitForMails(1)
            let mail = try #require(mails.first)
            #expect(mail.subject == "An authenticator app — added  Bcc: eve@example.org")
            #expect(mail.html?.contains("<p>Added: An authenticator app & more</p>") == true)
            #expect(mail.text?.hasPrefix("An authenticator app was added") == true)
            #expect(mail.defects.isEmpty && !mail.headers.contains("bcc"))
        }
    }
}

/// The courier's counters as a scraper reads them: `GET /metrics` on the service's own listener.
@Suite("Mail: the courier's metrics over HTTP", .timeLimit(.minutes(2)))
struct MailMetricsEndpointTests {
    @Test("a running Notifications serves its courier's counters at /metrics (Prometheus text) where configured, and nothing else there",
          .enabled(if: MailCourierTests.enabled, "KONTO_AIOSMTPD_PYTHON is not set (scripts/test.sh sets it)"))
    func served() async throws {
        try #require(MailCatcher.python != nil, "CI is set, but KONTO_AIOSMTPD_PYTHON is not")
        let catcher = try await MailCatcher.start(mode: "plain")
        do {
            var configuration = NotificationServiceConfiguration(port: 0, secret: MailCourierTests.secret)
            configuration.mail = MailSettings(
                smtp: SMTPClient.Configuration(host: "127.0.0.1", port: catcher.port, security: .none),
                from: try MailAddress("accounts@example.org"), publicURL: MailCourierTests.publicURL
            )
            configuration.metricsPort = 0
            let server = try NotificationServer(configuration: configuration, logger: MailCourierTests.logger)
            try await RunningServices.with([server], logger: MailCourierTests.logger) {
                // The courier declares its group as it starts; declaring it here too makes the publish safe to race that.
                _ = try await server.store.declareGroup(NotificationsSubscribeRequest(group: MailCourier.group, types: ["mailRequested"]))
                _ = try await server.store.publish(NotificationsPublishRequest(events: [MailCourierTests.request("acct-1", .passwordChanged)]))
                #expect(await catcher.waitForMails(1).count == 1)
                let http = HTTPClient(eventLoopGroupProvider: .singleton)
                do {
                    var port = server.metricsServerPort
                    let started = ContinuousClock.now
                    while port == nil, ContinuousClock.now - started < .seconds(10) {
                        try await Task.sleep(for: .milliseconds(20))
                        port = server.metricsServerPort
                    }
                    let base = "http://127.0.0.1:\(try #require(port))"
                    // Counted once the outcome is stored, just after the server answered.
                    var text = ""
                    let deadline = ContinuousClock.now + .seconds(10)
                    repeat {
                        let response = try await http.execute(HTTPClientRequest(url: base + "/metrics"), timeout: .seconds(5))
                        #expect(response.status == .ok && response.headers.first(name: "content-type")?.hasPrefix("text/plain") == true)
                        text = String(buffer: try await response.body.collect(upTo: 1 << 20))
                    } while !text.contains("konto_mail_sent_total 1") && ContinuousClock.now < deadline
                    #expect(text.contains("konto_mail_sent_total 1"), "\(text)")
                    let other = try await http.execute(HTTPClientRequest(url: base + "/v1/anything"), timeout: .seconds(5))
                    #expect(other.status == .notFound)
                } catch {
                    try? await http.shutdown()
                    throw error
                }
                try await http.shutdown()
            }
        } catch {
            await catcher.stop()
            throw error
        }
        await catcher.stop()
    }
}
