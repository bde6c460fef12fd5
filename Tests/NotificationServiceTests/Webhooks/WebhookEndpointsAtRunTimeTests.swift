import AsyncHTTPClient
import Foundation
import KontoContracts
import KontoModel
import KontoRuntime
import KontoTestSupport
import KontoWire
import NIOHTTP1
@testable import NotificationService
import Testing

/// Webhook endpoints added and removed at run time (the admin API's `notifications.addWebhookEndpoint` and
/// `removeWebhookEndpoint`), beside the deployment's file's.
@Suite("Webhook endpoints at run time", .timeLimit(.minutes(2)))
struct WebhookEndpointsAtRunTimeTests {
    typealias Harness = NotificationServiceHarness
    static let fileSecret = WebhookTests.secretText

    /// A service with the file endpoint `mailer` (reset events, tokens opened) at `mailer`, local endpoints allowed.
    static func withService(
        _ kind: NotificationStorageKind, mailer: WebhookReceiver, allowsLocal: Bool = true, maxStored: Int = 50,
        _ body: @escaping @Sendable (Harness.Running, WireClient) async throws -> Void
    ) async throws {
        let file = WebhookEndpoint(
            name: "mailer", url: URL(string: "http://127.0.0.1:\(mailer.port)/mail")!, secret: fileSecret, types: ["passwordResetRequested"], insecure: true
        )
        try await Harness.withService(kind, webhooks: [file], configure: {
            $0.allowsLocalWebhooks = allowsLocal
            $0.webhookReloadInterval = .milliseconds(200)
            $0.maxStoredWebhooks = maxStored
        }) { running in
            let client = running.client()
            try await Harness.with(client) { try await body(running, client) }
        }
    }

    static func resetEvent(_ accountId: String, token: String) -> AccountEvent {
        AccountEvent(accountId: accountId, kind: .passwordResetRequested(
            userId: "ada@example.org", token: ResetTokenSeal(secret: WireSecret(Harness.secret)).seal(token, accountId: accountId),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_000)
        ))
    }

    @Test("an endpoint added through the API is listed without its secret, gets the events stored after it signed with the secret made for it, never a reset token, and once removed has no group left", arguments: NotificationStorageKind.allCases)
    func addDeliverRemove(kind: NotificationStorageKind) async throws {
        let mailer = try await WebhookReceiver.start(statuses: [.noContent])
        let crm = try await WebhookReceiver.start(statuses: [.noContent])
        try await Self.withService(kind, mailer: mailer) { running, client in
            let added = try await client.call(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(
                name: "crm", url: "http://127.0.0.1:\(crm.port)/hooks?token=receivers-own", types: ["passwordResetRequested", "passwordChanged"]
            ))
            let secretText = try #require(added.secret)
            let secret = try WebhookSecret(secretText)
            #expect(added.endpoint == NotificationsWebhookEndpoint(
                name: "crm", url: "http://127.0.0.1:\(crm.port)/hooks", types: ["passwordChanged", "passwordResetRequested"], source: .api,
                deliversResetTokens: false, createdAt: added.endpoint.createdAt
            ))
            #expect(added.endpoint.createdAt != nil)
            let listed = try await client.call(NotificationsContract.webhookEndpoints, NotificationsWebhookEndpointsRequest())
            #expect(listed.endpoints.map(\.name) == ["mailer", "crm"])
            #expect(listed.endpoints.map(\.source) == [.file, .api])
            #expect(listed.endpoints.map(\.deliversResetTokens) == [true, false])
            #expect(listed.endpoints[0].url == "http://127.0.0.1:\(mailer.port)/mail" && listed.endpoints[0].createdAt == nil)
            #expect(listed.endpoints[1] == added.endpoint)
            let listing = String(decoding: try JSONEncoder().encode(listed), as: UTF8.self)
            #expect(!listing.contains(secretText) && !listing.contains(Self.fileSecret) && !listing.contains("receivers-own"))

            let reset = Self.resetEvent("a1", token: "reset-1")
            let changed = Harness.event("a1", .passwordChanged)
            _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [reset, changed, Harness.event("a1", .emailVerified)]))
            await crm.waitForRequests(2)
            await mailer.waitForRequests(1)
            let requests = crm.requests
            #expect(requests.map { $0.headers.first(name: WebhookSignature.idHeader) } == [reset.id.uuidString, changed.id.uuidString])
            for request in requests {
                let id = try #require(request.headers.first(name: WebhookSignature.idHeader))
                let timestamp = try #require(request.headers.first(name: WebhookSignature.timestampHeader).flatMap { Int64($0) })
                let signature = try #require(request.headers.first(name: WebhookSignature.signatureHeader))
                #expect(WebhookSignature.verify(secret: secret, id: id, timestamp: timestamp, body: request.body, signature: signature))
            }
            // The API's endpoint asked for resets and gets them, without the token (nor its sealed box).
            let resetBody = try #require(try JSONSerialization.jsonObject(with: Data(requests[0].body)) as? [String: Any])
            #expect(resetBody["type"] as? String == "passwordResetRequested" && resetBody["userId"] as? String == "ada@example.org")
            #expect(resetBody["token"] == nil && resetBody["sealedToken"] == nil)
            // The file's mail sender still gets it opened.
            let mailed = try #require(try JSONSerialization.jsonObject(with: Data(mailer.requests[0].body)) as? [String: Any])
            #expect(mailed["token"] as? String == "reset-1")

            // Both delivered; an acknowledgement may still be on its way to the storage (stored in batches), so the
            // delivery it settles may count as dropped.
            let removed = try await client.call(NotificationsContract.removeWebhookEndpoint, NotificationsRemoveWebhookRequest(name: "crm"))
            #expect(removed.droppedDeliveries <= 2)
            #expect(try await client.call(NotificationsContract.webhookEndpoints, NotificationsWebhookEndpointsRequest()).endpoints.map(\.name) == ["mailer"])
            // Its group is gone at once, on every replica: nothing stored from now on is queued for it.
            #expect(try await running.server.store.storage.groupExists("webhook:crm") == false)
            #expect(await wireErrorCode { try await client.call(NotificationsContract.removeWebhookEndpoint, NotificationsRemoveWebhookRequest(name: "crm")) } == .notificationsUnknownWebhook)
        }
        await mailer.stop()
        await crm.stop()
    }

    @Test("removing an endpoint drops its queued and failed deliveries; one added again under its name starts empty", arguments: NotificationStorageKind.allCases)
    func removeDropsDeliveries(kind: NotificationStorageKind) async throws {
        let mailer = try await WebhookReceiver.start(statuses: [.noContent])
        let failing = try await WebhookReceiver.start(statuses: Array(repeating: .serviceUnavailable, count: 100))
        try await Self.withService(kind, mailer: mailer) { running, client in
            _ = try await client.call(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(
                name: "flaky", url: "http://127.0.0.1:\(failing.port)/", types: ["deletingAccount"], secret: WebhookTests.otherText
            ))
            _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [Harness.event("a1", .deletingAccount)]))
            var failed: [NotificationsFailedDelivery] = []
            while failed.isEmpty {
                failed = try await client.call(NotificationsContract.failedDeliveries, NotificationsDeadLettersRequest(group: "webhook:flaky")).deliveries
                if failed.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
            }
            let removed = try await client.call(NotificationsContract.removeWebhookEndpoint, NotificationsRemoveWebhookRequest(name: "flaky"))
            #expect(removed.droppedDeliveries == 1)
            #expect(await wireErrorCode { try await client.call(NotificationsContract.failedDeliveries, NotificationsDeadLettersRequest(group: "webhook:flaky")) } == .notificationsUnknownGroup)
            _ = try await client.call(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(
                name: "flaky", url: "http://127.0.0.1:\(failing.port)/", types: ["deletingAccount"], secret: WebhookTests.otherText
            ))
            #expect(try await client.call(NotificationsContract.failedDeliveries, NotificationsDeadLettersRequest(group: "webhook:flaky")).deliveries.isEmpty)
            #expect(try await running.server.store.storage.webhookAttempts(endpoint: "flaky", limit: 10).isEmpty)
        }
        await mailer.stop()
        await failing.stop()
    }

    @Test("refusals: a taken name (the file's or the API's), a file's endpoint removed, an unknown one, every problem of a definition at once; none changes anything", arguments: NotificationStorageKind.allCases)
    func refusals(kind: NotificationStorageKind) async throws {
        let mailer = try await WebhookReceiver.start(statuses: [.noContent])
        try await Self.withService(kind, mailer: mailer, allowsLocal: false) { running, client in
            func add(_ request: NotificationsAddWebhookRequest) async -> (KontoErrorCode?, String) {
                do {
                    _ = try await client.call(NotificationsContract.addWebhookEndpoint, request)
                    return (nil, "")
                } catch let error as WireError {
                    return (error.code, error.message)
                } catch {
                    return (KontoErrorCode(rawValue: "other"), "\(error)")
                }
            }
            #expect(await add(NotificationsAddWebhookRequest(name: "mailer", url: "https://crm.example.org/hook")).0 == .notificationsWebhookExists)
            #expect(await add(NotificationsAddWebhookRequest(name: "crm", url: "https://crm.example.org/hook")).0 == nil)
            #expect(await add(NotificationsAddWebhookRequest(name: "crm", url: "https://other.example.org/hook")).0 == .notificationsWebhookExists)
            let (code, message) = await add(NotificationsAddWebhookRequest(
                name: "no spaces", url: "http://user:pass@localhost/hook", types: ["passwordChanged", "noSuchType"], secret: "whsec_c2hvcnQ="
            ))
            #expect(code == .notificationsInvalidRequest)
            for part in ["name must be 1 to 64", "url must be an https URL", "must not carry credentials", "must name a public host", "unknown event type 'noSuchType'", "secret decodes to fewer than 24 bytes"] {
                #expect(message.contains(part), "\(message)")
            }
            #expect(!message.contains("c2hvcnQ") && !message.contains("pass@"))
            for url in [
                "https://localhost/hook", "https://api.localhost/hook", "https://127.0.0.1/hook", "https://127.1/hook", "https://2130706433/hook",
                "https://10.0.0.8/hook", "https://172.20.1.1/hook", "https://192.168.1.10/hook", "https://169.254.169.254/latest/meta-data",
                "https://100.64.0.1/hook", "https://0.0.0.0/hook", "https://[::1]/hook", "https://[::ffff:127.0.0.1]/hook", "https://[fd00::1]/hook",
                "https://[fe80::1]/hook", "notaurl", "https:///nohost", "ftp://files.example.org/hook",
                "https://example.org/" + String(repeating: "a", count: 2_100),
            ] {
                #expect(await add(NotificationsAddWebhookRequest(name: "inside", url: url)).0 == .notificationsInvalidRequest, "\(url.prefix(60))")
            }
            #expect(await add(NotificationsAddWebhookRequest(name: "typeless", url: "https://crm.example.org/hook", types: [])).0 == .notificationsInvalidRequest)
            #expect(await wireErrorCode { try await client.call(NotificationsContract.removeWebhookEndpoint, NotificationsRemoveWebhookRequest(name: "mailer")) } == .notificationsWebhookInFile)
            #expect(await wireErrorCode { try await client.call(NotificationsContract.removeWebhookEndpoint, NotificationsRemoveWebhookRequest(name: "nobody")) } == .notificationsUnknownWebhook)
            #expect(await wireErrorCode { try await client.call(NotificationsContract.removeWebhookEndpoint, NotificationsRemoveWebhookRequest(name: "")) } == .notificationsInvalidRequest)
            let listed = try await client.call(NotificationsContract.webhookEndpoints, NotificationsWebhookEndpointsRequest()).endpoints
            #expect(listed.map(\.name) == ["mailer", "crm"])
            #expect(listed[1].url == "https://crm.example.org/hook")
            #expect(try await running.server.store.storage.webhookEndpoints().map(\.name) == ["crm"])
        }
        await mailer.stop()
    }

    @Test("the API stores at most the limit's endpoints however many adds race (real threads, many rounds); the file's do not count, a removal frees a place", arguments: NotificationStorageKind.allCases)
    func limit(kind: NotificationStorageKind) async throws {
        let mailer = try await WebhookReceiver.start(statuses: [.noContent])
        try await Self.withService(kind, mailer: mailer, allowsLocal: false, maxStored: 3) { running, client in
            for round in 0..<20 {
                let outcomes = await withTaskGroup(of: KontoErrorCode?.self) { group in
                    for index in 0..<8 {
                        group.addTask {
                            await wireErrorCode {
                                try await client.call(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(
                                    name: "r\(round)-\(index)", url: "https://crm.example.org/hook/\(index)"
                                ))
                            }
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                #expect(outcomes.filter { $0 == nil }.count == 3, "round \(round): \(outcomes)")
                #expect(outcomes.filter { $0 == .notificationsWebhookLimit }.count == 5, "round \(round): \(outcomes)")
                let stored = try await running.server.store.storage.webhookEndpoints()
                #expect(stored.count == 3, "round \(round)")
                // The file's endpoint is listed beside them and was never counted.
                #expect(try await client.call(NotificationsContract.webhookEndpoints, NotificationsWebhookEndpointsRequest()).endpoints.count == 4)
                for endpoint in stored {
                    _ = try await client.call(NotificationsContract.removeWebhookEndpoint, NotificationsRemoveWebhookRequest(name: endpoint.name))
                }
            }
            for name in ["a", "b", "c"] {
                _ = try await client.call(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(name: name, url: "https://crm.example.org/\(name)"))
            }
            do {
                _ = try await client.call(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(name: "d", url: "https://crm.example.org/d"))
                Issue.record("a fourth endpoint was stored")
            } catch let error as WireError {
                #expect(error.code == .notificationsWebhookLimit)
                #expect(error.message.contains("KONTO_NOTIFICATIONS_WEBHOOKS_MAX") && error.message.contains("3"))
            }
            // A taken name is told as taken, not as the limit.
            #expect(await wireErrorCode { try await client.call(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(name: "a", url: "https://crm.example.org/a")) } == .notificationsWebhookExists)
            _ = try await client.call(NotificationsContract.removeWebhookEndpoint, NotificationsRemoveWebhookRequest(name: "b"))
            _ = try await client.call(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(name: "d", url: "https://crm.example.org/d"))
            #expect(try await running.server.store.storage.webhookEndpoints().map(\.name) == ["a", "c", "d"])
        }
        await mailer.stop()
    }

    @Test("an endpoint stored by another replica is served within the reload interval, no restart")
    func anotherReplicasEndpoint() async throws {
        for kind in NotificationStorageKind.allCases {
            let mailer = try await WebhookReceiver.start(statuses: [.noContent])
            let crm = try await WebhookReceiver.start(statuses: [.noContent])
            try await Self.withService(kind, mailer: mailer) { running, client in
                // Written to the storage as another replica's store writes it: this replica's store is not told.
                let seal = WebhookSecretSeal(secret: WireSecret(Harness.secret))
                let stored = StoredWebhookEndpoint(
                    name: "crm", url: "http://127.0.0.1:\(crm.port)/", types: ["passwordChanged"], sealedSecret: seal.seal(WebhookTests.otherText, name: "crm"), createdAt: .now
                )
                #expect(try await running.server.store.storage.addWebhookEndpoint(stored, groupOwner: nil, limit: 50, at: .now) == .added)
                let event = Harness.event("a2", .passwordChanged)
                _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: [event]))
                await crm.waitForRequests(1)
                let request = try #require(crm.requests.first)
                let timestamp = try #require(request.headers.first(name: WebhookSignature.timestampHeader).flatMap { Int64($0) })
                #expect(WebhookSignature.verify(
                    secret: WebhookTests.other, id: event.id.uuidString, timestamp: timestamp, body: request.body,
                    signature: request.headers.first(name: WebhookSignature.signatureHeader) ?? ""
                ))
            }
            await mailer.stop()
            await crm.stop()
        }
    }

    @Test("the secret is stored sealed: not in the row, opened only under this deployment's key and for its own name")
    func sealedAtRest() async throws {
        let crm = try await WebhookReceiver.start(statuses: [.noContent])
        let mailer = try await WebhookReceiver.start(statuses: [.noContent])
        try await Self.withService(.postgres, mailer: mailer) { running, client in
            _ = try await client.call(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(
                name: "crm", url: "http://127.0.0.1:\(crm.port)/", secret: WebhookTests.otherText
            ))
            let row = try #require(try await running.server.store.storage.webhookEndpoints().first)
            let payload = String(WebhookTests.otherText.dropFirst(WebhookSecret.prefix.count))
            #expect(!row.sealedSecret.contains(payload) && !row.sealedSecret.contains(String(payload.prefix(16))))
            #expect(WebhookSecretSeal(secret: WireSecret(Harness.secret)).open(row.sealedSecret, name: "crm") == WebhookTests.otherText)
            #expect(WebhookSecretSeal(secret: WireSecret("another-deployments-secret-0123456789")).open(row.sealedSecret, name: "crm") == nil)
            #expect(WebhookSecretSeal(secret: WireSecret(Harness.secret)).open(row.sealedSecret, name: "other") == nil)
            #expect(WebhookSecretSeal(secret: WireSecret(Harness.secret)).open("not sealed", name: "crm") == nil)
        }
        await crm.stop()
        await mailer.stop()
    }

    @Test("an API endpoint's host is resolved at delivery and connected to only at a public address: none, or only inside ones, and nothing is sent")
    func pinnedAddresses() async throws {
        func pin(_ addresses: [String]) -> WebhookAddressPin {
            WebhookAddressPin(host: "hooks.example.net", configuration: .init(), resolver: .init { _ in addresses })
        }
        for inside in [[], ["10.0.0.7"], ["127.0.0.1", "::1"], ["169.254.169.254", "fe80::1%eth0", "64:ff9b::a9fe:a9fe"]] {
            let refused = pin(inside)
            #expect(await refused.client() == nil, "\(inside)")
            await refused.shutdown()
        }
        // A public address among inside ones: that one, and only that one, is connected to.
        let mixed = pin(["10.0.0.7", "93.184.215.14"])
        #expect(await mixed.client() != nil)
        #expect(await mixed.pinned == ["93.184.215.14"])
        await mixed.shutdown()
        // The system's resolver, as deliveries use it: this machine's name is this machine.
        #expect(await WebhookAddressPin.Resolver.system.addresses("localhost").allSatisfy { WebhookEndpoint.isLocal(host: $0) })
        #expect(await !WebhookAddressPin.Resolver.system.addresses("localhost").isEmpty)
        // Addresses written in the URL were checked when added; names are pinned.
        #expect(WebhookAddressPin.needsPin(URL(string: "https://hooks.example.net/in")!))
        #expect(!WebhookAddressPin.needsPin(URL(string: "https://93.184.215.14/in")!) && !WebhookAddressPin.needsPin(URL(string: "https://[2001:db8::1]/in")!))
    }

    @Test("local hosts: every spelling the resolver reads as this machine or a private network is local; public ones are not")
    func localHosts() {
        for host in [
            "localhost", "LOCALHOST", "localhost.", "api.localhost", "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "10.1.2.3",
            "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255",
            "::1", "[::1]", "::", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "fe80::1", "fd00::1", "fc00::1",
            // Zone ids, NAT64 and 6to4 around an inside IPv4 address, IPv6 multicast, Teredo (issue 69, 7).
            "fe80::1%eth0", "[fe80::1%25eth0]", "fe80::1%25eth0", "64:ff9b::a9fe:a9fe", "64:ff9b::10.0.0.1", "64:ff9b:1::a9fe:a9fe", "ff02::1", "ff0e::1",
            "[ff05::2]", "2002:a9fe:a9fe::1", "2002:7f00:1::", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        ] {
            #expect(WebhookEndpoint.isLocal(host: host), "\(host)")
        }
        for host in [
            "example.org", "8.8.8.8", "172.32.0.1", "172.15.0.1", "192.169.0.1", "100.128.0.1", "2001:4860:4860::8888", "::ffff:8.8.8.8", "localhost.example.org",
            "64:ff9b::808:808", "2002:808:808::1",
        ] {
            #expect(!WebhookEndpoint.isLocal(host: host), "\(host)")
        }
    }
}
