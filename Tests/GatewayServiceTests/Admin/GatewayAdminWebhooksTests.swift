import Foundation
@testable import GatewayService
import IdentityService
import KontoContracts
import KontoTestSupport
import NIOHTTP1
import NotificationService
import Testing

/// Webhook endpoints added and removed at run time through the admin API and `konto admin webhooks` (docs/ADMIN.md,
/// "Webhook endpoints"), over the real services: an added endpoint gets the events that follow, signed with the secret
/// answered once; deliveries:write is needed and every call is audited first.
@Suite("Gateway admin API: webhook endpoints", .timeLimit(.minutes(4)))
struct GatewayAdminWebhooksTests {
    @Test("an endpoint added through the API receives the events that follow, signed with its secret; listed without it, removed with the CLI; refusals and the audit log")
    func addedAndRemoved() async throws {
        let receiver = try await WebhookReceiver.start(statuses: [.noContent])
        try await GatewayHarness.withGateway(
            configure: { $0.adminPort = 0 }, identityOptions: GatewayAdminTests.identityOptions(),
            configureNotifications: { configuration in
                // The receiver is on loopback over http: a development deployment's allowance.
                configuration.allowsLocalWebhooks = true
                configuration.webhookReloadInterval = .milliseconds(200)
            }
        ) { running in
            var admin = running
            admin.baseURL = try #require(running.adminURL)
            let root = GatewayAdminTests.bootstrap.text
            let url = "http://127.0.0.1:\(receiver.port)/konto"

            let added = try await admin.request(.POST, "/admin/v1/webhooks", json: #"{"name":"crm","url":"\#(url)","types":["accountDisabled"]}"#, token: root)
            #expect(added.status == 201, "\(added.text)")
            let secret = try #require(added.object["secret"] as? String)
            #expect(secret.hasPrefix("whsec_"))
            let webhook = try #require(added.object["webhook"] as? [String: Any])
            #expect(webhook["name"] as? String == "crm" && webhook["source"] as? String == "api" && webhook["deliversResetTokens"] as? Bool == false)

            let listed = try await admin.request(.GET, "/admin/v1/webhooks", token: root)
            #expect(listed.status == 200 && !listed.text.contains(secret.dropFirst(6)), "\(listed.text)")
            #expect((listed.object["webhooks"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["crm"])

            let user = try await running.signUp("hooked@example.org")
            #expect(try await admin.request(.POST, "/admin/v1/accounts/\(user.accountId)/disable", token: root).status == 204)
            await receiver.waitForRequests(1)
            let request = try #require(receiver.requests.first)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any])
            #expect(body["type"] as? String == "accountDisabled" && body["accountId"] as? String == user.accountId)
            let timestamp = try #require(request.headers.first(name: WebhookSignature.timestampHeader).flatMap { Int64($0) })
            #expect(WebhookSignature.verify(
                secret: secret, id: request.headers.first(name: WebhookSignature.idHeader) ?? "", timestamp: timestamp, body: request.body,
                signature: request.headers.first(name: WebhookSignature.signatureHeader) ?? ""
            ))

            // Refusals: a taken name, a malformed definition, an unknown endpoint; a key without deliveries:write, none.
            #expect(try await admin.request(.POST, "/admin/v1/webhooks", json: #"{"name":"crm","url":"https://crm.example.org/"}"#, token: root).code == "notifications.webhookExists")
            let invalid = try await admin.request(.POST, "/admin/v1/webhooks", json: #"{"name":"ftp","url":"ftp://files.example.org/","types":["nothing"]}"#, token: root)
            #expect(invalid.status == 400 && invalid.code == "notifications.invalidRequest", "\(invalid.text)")
            #expect(try await admin.request(.POST, "/admin/v1/webhooks", json: #"{"name":"no spaces","url":"https://crm.example.org/"}"#, token: root).status == 400)
            #expect(try await admin.request(.DELETE, "/admin/v1/webhooks/nobody", token: root).code == "notifications.unknownWebhook")
            let reader = try await admin.request(.POST, "/admin/v1/keys", json: #"{"name":"reader","scopes":["accounts:read"]}"#, token: root)
            let readerKey = try #require(reader.object["secret"] as? String)
            #expect(try await admin.request(.GET, "/admin/v1/webhooks", token: readerKey).status == 403)
            #expect(try await admin.request(.POST, "/admin/v1/webhooks", json: #"{"name":"spy","url":"https://spy.example.org/"}"#, token: readerKey).status == 403)
            #expect(try await admin.request(.DELETE, "/admin/v1/webhooks/crm", token: readerKey).status == 403)
            #expect(try await admin.request(.GET, "/admin/v1/webhooks").status == 401)
            // The public listener serves none of it.
            #expect(try await running.request(.GET, "/admin/v1/webhooks", token: root).status == 404)

            // The command line: list, add with a secret of one's own (key, then secret, on standard input), remove.
            let executable = try ServiceProcess.executable(named: "konto")
            let environment = ["KONTO_ADMIN_URL": try #require(admin.adminURL)]
            let ownSecret = "whsec_" + Data(repeating: 9, count: 32).base64EncodedString()
            let cliAdded = try await ServiceProcess.run(
                executable, arguments: ["admin", "webhooks", "add", "ledger", url + "/ledger", "--type", "accountEnabled", "--secret-stdin", "--json"],
                environment: environment, input: root + "\n" + ownSecret + "\n"
            )
            #expect(cliAdded.status == 0 && !cliAdded.standardOutput.contains(ownSecret) && !cliAdded.standardOutput.contains("\"secret\""), "\(cliAdded.standardOutput) \(cliAdded.standardError)")
            let cliListed = try await ServiceProcess.run(executable, arguments: ["admin", "webhooks", "list", "--json"], environment: environment, input: root + "\n")
            let names = (try JSONSerialization.jsonObject(with: Data(cliListed.standardOutput.utf8)) as? [[String: Any]])?.compactMap { $0["name"] as? String }
            #expect(names == ["crm", "ledger"], "\(cliListed.standardOutput) \(cliListed.standardError)")
            #expect(try await admin.request(.POST, "/admin/v1/accounts/\(user.accountId)/enable", token: root).status == 204)
            await receiver.waitForRequests(2)
            let ledgerRequest = receiver.requests[1]
            #expect(ledgerRequest.headers.first(name: "webhook-signature").map { signature in
                WebhookSignature.verify(
                    secret: ownSecret, id: ledgerRequest.headers.first(name: WebhookSignature.idHeader) ?? "",
                    timestamp: Int64(ledgerRequest.headers.first(name: WebhookSignature.timestampHeader) ?? "") ?? 0, body: ledgerRequest.body, signature: signature
                )
            } == true)
            let removed = try await ServiceProcess.run(executable, arguments: ["admin", "webhooks", "remove", "ledger"], environment: environment, input: root + "\n")
            #expect(removed.status == 0 && removed.standardOutput.contains("Removed ledger"), "\(removed.standardOutput) \(removed.standardError)")
            let gone = try await admin.request(.DELETE, "/admin/v1/webhooks/crm", token: root)
            #expect(gone.status == 200 && gone.object["droppedDeliveries"] is Int, "\(gone.text)")
            #expect((try await admin.request(.GET, "/admin/v1/webhooks", token: root).object["webhooks"] as? [Any])?.isEmpty == true)

            // A URL carrying a receiver's token (query) and user info: the audit keeps its place only.
            _ = try await admin.request(.POST, "/admin/v1/webhooks", json: #"{"name":"tokened","url":"https://hook:pw-s3cret@hooks.example.org/in?token=q-s3cret#f"}"#, token: root)
            _ = try await admin.request(.DELETE, "/admin/v1/webhooks/tokened", token: root)

            // Every call is in the audit log before it was made, the refused ones too; never the secret.
            let audit = try await admin.request(.GET, "/admin/v1/audit?type=admin.operatorAuthorize&limit=100", token: root)
            #expect(!audit.text.contains(secret.dropFirst(6)) && !audit.text.contains(ownSecret.dropFirst(6)))
            #expect(!audit.text.contains("s3cret") && audit.text.contains("webhooks.add tokened https://hooks.example.org/in"), "\(audit.text)")
            let actions = (audit.object["entries"] as? [[String: Any]] ?? []).compactMap { ($0["facts"] as? [String: String]).map { ($0["action"] ?? "", $0["outcome"] ?? "") } }
            #expect(actions.contains { $0 == ("webhooks.add crm \(url)", "ok") }, "\(actions)")
            #expect(actions.contains { $0 == ("webhooks.remove ledger", "ok") }, "\(actions)")
            #expect(actions.contains { $0 == ("webhooks.add spy https://spy.example.org/", "admin.scopeMissing") }, "\(actions)")
        }
        await receiver.stop()
    }
}
