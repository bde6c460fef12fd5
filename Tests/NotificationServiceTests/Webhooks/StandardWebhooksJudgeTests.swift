import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
@testable import NotificationService
import Testing

/// Konto's deliveries judged by a foreign implementation: Tests/Webhooks/standard_webhooks_judge.py is the HTTP
/// receiver of a running Notifications service's webhook dispatcher and verifies every real delivery with the
/// `standardwebhooks` package from PyPI (Standard Webhooks' reference library) — with one secret, and during a
/// rotation with the new secret and with the old one, each on its own. scripts/test.sh installs the package and names
/// its Python in KONTO_STANDARDWEBHOOKS_PYTHON; without that the test is skipped, except on CI (CI set), which always
/// runs through scripts/test.sh, so there it fails.
@Suite("Standard Webhooks judge (Python standardwebhooks)", .timeLimit(.minutes(3)))
struct StandardWebhooksJudgeTests {
    typealias Harness = NotificationServiceHarness
    static let python = ProcessInfo.processInfo.environment["KONTO_STANDARDWEBHOOKS_PYTHON"]
    static let onCI = ProcessInfo.processInfo.environment["CI"] != nil
    /// The judge ends itself after 60 s without its deliveries; this only ends a judge that hangs.
    static let bound: Duration = .seconds(90)

    struct Scenario: Sendable, CustomTestStringConvertible {
        let name: String
        let secret: String?
        let secrets: [String]?
        /// The secrets the judge verifies every delivery with, each on its own.
        let verifiedWith: [String]
        var testDescription: String { name }
    }

    static let scenarios = [
        Scenario(name: "one secret", secret: WebhookTests.secretText, secrets: nil, verifiedWith: [WebhookTests.secretText]),
        Scenario(name: "rotation, secrets: [new, old]", secret: nil, secrets: [WebhookTests.rotatedText, WebhookTests.secretText], verifiedWith: [WebhookTests.rotatedText, WebhookTests.secretText]),
        Scenario(name: "rotation, secret: old beside secrets: [new]", secret: WebhookTests.secretText, secrets: [WebhookTests.rotatedText], verifiedWith: [WebhookTests.rotatedText, WebhookTests.secretText]),
    ]

    @Test(
        "every real delivery verifies with standardwebhooks, with each of the endpoint's secrets",
        .enabled(if: python != nil || onCI, "KONTO_STANDARDWEBHOOKS_PYTHON is not set (scripts/test.sh sets it)"),
        arguments: scenarios
    )
    func judged(scenario: Scenario) async throws {
        guard let python = Self.python else {
            Issue.record("CI is set, but KONTO_STANDARDWEBHOOKS_PYTHON is not: CI runs the tests through scripts/test.sh, which installs standardwebhooks and sets it")
            return
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Webhooks/standard_webhooks_judge.py").path
        let events = [
            Harness.event("a1"),
            WebhookResetTokenTests.resetEvent(accountId: "a2", token: "reset-1"),
            Harness.event("a3", .deletingAccount),
        ]
        let (ports, announced) = AsyncStream.makeStream(of: Int.self)
        let judge = Task {
            // Finished however the judge ends, so waiting for its port cannot outlive it.
            defer { announced.finish() }
            return try await ConversingProcess.run(python, ["-u", script], environment: [
                "JUDGE_SECRETS": scenario.verifiedWith.joined(separator: " "),
                "JUDGE_WRONG": WebhookTests.otherText,
                "JUDGE_SIGNATURES": "\(scenario.verifiedWith.count)",
                "JUDGE_EXPECT": "\(events.count)",
                "JUDGE_TIMEOUT": "60",
                "PYTHONUNBUFFERED": "1",
            ], bound: Self.bound) { line in
                print("judge: \(line)")
                if line.hasPrefix("listening "), let port = Int(line.dropFirst("listening ".count)) {
                    announced.yield(port)
                }
                return nil
            }
        }
        var port: Int?
        for await announcedPort in ports {
            port = announcedPort
            break
        }
        if let port {
            // Plain http to a receiver on loopback, hence insecure: true.
            let endpoint = WebhookEndpoint(name: "judged", url: URL(string: "http://127.0.0.1:\(port)/konto/events")!, secret: scenario.secret, secrets: scenario.secrets, insecure: true)
            try await Harness.withService(.inMemory, webhooks: [endpoint]) { running in
                let client = running.client()
                try await Harness.with(client) {
                    // Declared here too, so the publish cannot race the dispatcher's own declaration.
                    _ = try await client.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: endpoint.group))
                    _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: events))
                }
                // The service runs until the judge has had every delivery (or gave up after its own bound).
                _ = try await judge.value
            }
        }
        let run = try await judge.value
        #expect(port != nil, "the judge never said where it listens")
        #expect(!run.timedOut, "the judge did not end within \(Self.bound)")
        #expect(run.status == 0, "the judge refused (exit \(run.status)):\n\(run.output.suffix(8_000))")
        #expect(run.output.contains("verdict ok: \(events.count) deliveries verified by standardwebhooks"), "\(run.output.suffix(8_000))")
    }
}
