import Foundation
@testable import GatewayService
import IdentityService
import KontoContracts
import KontoTestSupport
import NIOHTTP1
import NotificationService
import Testing

/// Failed deliveries through the admin API (docs/ADMIN.md, "Failed deliveries"): a webhook that fails every attempt,
/// its event listed without its content, delivered again by an operator; the key's scope and the audit log.
@Suite("Gateway admin API: failed deliveries", .timeLimit(.minutes(4)))
struct GatewayAdminDeliveriesTests {
    @Test("a webhook's failed delivery is listed (metadata only), redelivered and then accepted; deliveries:write is needed and every call is audited first")
    func failedAndRedelivered() async throws {
        // Three failures (the attempts allowed here), then the redelivery is accepted.
        let receiver = try await WebhookReceiver.start(statuses: [.serviceUnavailable, .serviceUnavailable, .serviceUnavailable, .noContent])
        let endpoint = WebhookEndpoint(
            name: "crm", url: URL(string: "http://127.0.0.1:\(receiver.port)/konto")!, secret: "whsec_" + Data(repeating: 7, count: 32).base64EncodedString(),
            types: ["accountDisabled"], insecure: true
        )
        try await GatewayHarness.withGateway(
            configure: { $0.adminPort = 0 }, identityOptions: GatewayAdminTests.identityOptions(),
            configureNotifications: { configuration in
                configuration.webhooks = [endpoint]
                configuration.options.maxAttempts = 3
                configuration.options.retryBase = .milliseconds(20)
                configuration.options.retryMaximum = .milliseconds(100)
                configuration.options.pollInterval = .milliseconds(100)
            }
        ) { running in
            var admin = running
            admin.baseURL = try #require(running.adminURL)
            let root = GatewayAdminTests.bootstrap.text
            let user = try await running.signUp("webhook-user@example.org")
            #expect(try await admin.request(.POST, "/admin/v1/accounts/\(user.accountId)/disable", token: root).status == 204)
            await receiver.waitForRequests(3)

            // Listed once the third failure is recorded: which event, whose, how often, why; never its content.
            var failed: [[String: Any]] = []
            let deadline = ContinuousClock.now + .seconds(30)
            while failed.isEmpty, ContinuousClock.now < deadline {
                let listed = try await admin.request(.GET, "/admin/v1/deliveries/failed?group=webhook:crm", token: root)
                #expect(listed.status == 200, "\(listed.text)")
                failed = listed.object["deliveries"] as? [[String: Any]] ?? []
                if failed.isEmpty { await receiver.waitForRequests(4, within: .milliseconds(100)) }
            }
            try #require(failed.count == 1)
            #expect(failed[0]["type"] as? String == "accountDisabled" && failed[0]["accountId"] as? String == user.accountId)
            #expect(failed[0]["attempts"] as? Int == 3 && failed[0]["lastError"] as? String == "HTTP 503")
            #expect(Set(failed[0].keys) == ["eventId", "type", "accountId", "occurredAt", "attempts", "lastError", "deadAt"])

            // Another key without deliveries:write gets nothing, and nothing is redelivered.
            let reader = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"reader","scopes":["accounts:read"]}"#, token: root)
            let readerKey = try #require(reader.object["secret"] as? String)
            #expect(try await admin.request(.GET, "/admin/v1/deliveries/failed?group=webhook:crm", token: readerKey).status == 403)
            #expect(try await admin.request(.POST, "/admin/v1/deliveries/failed/redeliver", json: #"{"group":"webhook:crm"}"#, token: readerKey).status == 403)
            #expect(try await admin.request(.GET, "/admin/v1/deliveries/failed?group=webhook:crm").status == 401)
            #expect(receiver.requests.count == 3)
            // Only Notifications' own deliveries; a webhook never configured is not found.
            let foreign = try await admin.request(.GET, "/admin/v1/deliveries/failed?group=profile-deletions", token: root)
            #expect(foreign.status == 400 && foreign.code == "notifications.invalidRequest", "\(foreign.text)")
            #expect(try await admin.request(.GET, "/admin/v1/deliveries/failed?group=webhook:nobody", token: root).code == "notifications.unknownGroup")
            #expect(try await admin.request(.POST, "/admin/v1/deliveries/failed/redeliver", json: #"{"group":"webhook:crm","eventIds":["nope"]}"#, token: root).status == 400)

            let redelivered = try await admin.request(.POST, "/admin/v1/deliveries/failed/redeliver", json: #"{"group":"webhook:crm"}"#, token: root)
            #expect(redelivered.status == 200 && redelivered.object["redelivered"] as? Int == 1, "\(redelivered.text)")
            await receiver.waitForRequests(4)
            #expect(receiver.requests.count == 4)

            // The audit log has each call with what it was about to do, the refused ones too.
            let audit = try await admin.request(.GET, "/admin/v1/audit?type=admin.operatorAuthorize&limit=50", token: root)
            let entries = try #require(audit.object["entries"] as? [[String: Any]])
            let actions = entries.compactMap { ($0["facts"] as? [String: String]).map { ($0["action"] ?? "", $0["outcome"] ?? "") } }
            #expect(actions.contains { $0 == ("deliveries.redeliver webhook:crm", "ok") }, "\(actions)")
            #expect(actions.contains { $0 == ("deliveries.list webhook:crm", "admin.scopeMissing") }, "\(actions)")
        }
        await receiver.stop()
    }
}
