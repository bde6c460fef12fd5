import Crypto
import Foundation
import KontoContracts
import KontoModel
import KontoRuntime
import Logging

/// The webhook endpoints a store delivers to: the deployment's file's, fixed at start, and those added through the
/// admin API, stored and read again by every replica's dispatcher (``WebhookDispatcher``).
public struct WebhookSettings: Sendable {
    /// The file's (`KONTO_NOTIFICATIONS_WEBHOOKS`).
    public var fileEndpoints: [WebhookEndpoint]
    /// Seals the secrets of the API's endpoints at rest.
    public var secretSeal: WebhookSecretSeal
    /// Lets an endpoint added through the API use http:// and local addresses (development and tests only;
    /// `KONTO_NOTIFICATIONS_WEBHOOKS_ALLOW_LOCAL`).
    public var allowsLocalEndpoints: Bool
    /// How often each replica reads the stored endpoints again (an endpoint added or removed through another
    /// replica is served or dropped within it; one changed through this replica at once).
    public var reloadInterval: Duration
    /// How many endpoints the API may store (`KONTO_NOTIFICATIONS_WEBHOOKS_MAX`): each is a worker on every replica
    /// and a queued copy of every event it takes, so a key with `deliveries:write` must not add them without end.
    /// The file's do not count (the operator writes those).
    public var maxStoredEndpoints: Int

    public init(
        fileEndpoints: [WebhookEndpoint] = [], secretSeal: WebhookSecretSeal = .random(), allowsLocalEndpoints: Bool = false,
        reloadInterval: Duration = .seconds(5), maxStoredEndpoints: Int = 50
    ) {
        self.fileEndpoints = fileEndpoints
        self.secretSeal = secretSeal
        self.allowsLocalEndpoints = allowsLocalEndpoints
        self.reloadInterval = reloadInterval
        self.maxStoredEndpoints = maxStoredEndpoints
    }
}

extension NotificationStore {
    /// ``NotificationsContract/webhookEndpoints``: the file's, then the API's; never a secret.
    public func webhookEndpoints() async throws(ServiceError) -> NotificationsWebhookEndpoints {
        let stored = try await stored { () async throws(NotificationStorageError) in try await storage.webhookEndpoints() }
        let fileNames = Set(webhooks.fileEndpoints.map(\.name))
        let file = webhooks.fileEndpoints.sorted { $0.name < $1.name }.map { Self.listed($0, createdAt: nil) }
        // A stored endpoint of a file's name is not served (the file's is); it is not listed either.
        let api = stored.filter { !fileNames.contains($0.name) }.compactMap { endpoint in
            URL(string: endpoint.url).map {
                Self.listed(WebhookEndpoint(name: endpoint.name, url: $0, types: endpoint.types, source: .api), createdAt: endpoint.createdAt)
            }
        }
        return NotificationsWebhookEndpoints(endpoints: file + api)
    }

    /// ``NotificationsContract/addWebhookEndpoint``: checked, its secret made (or taken) and sealed, stored with its
    /// group; this replica's dispatcher serves it at once, the others at their next reload.
    public func addWebhookEndpoint(_ request: NotificationsAddWebhookRequest) async throws(ServiceError) -> NotificationsWebhookAdded {
        let problems = WebhookEndpoint.problems(adding: request, allowsLocal: webhooks.allowsLocalEndpoints)
        guard problems.isEmpty else { throw .notificationsInvalidRequest(problems.joined(separator: "; ")) }
        guard !webhooks.fileEndpoints.contains(where: { $0.name == request.name }) else { throw .webhookExists(request.name) }
        guard let url = URL(string: request.url) else { throw .notificationsInvalidRequest("url must be an absolute https URL with a host") }
        let made = request.secret == nil ? Self.makeSecret() : nil
        let secret = request.secret ?? made!
        let types = try Self.checkTypes(request.types)
        let now = clock()
        let endpoint = StoredWebhookEndpoint(
            name: request.name, url: request.url, types: types, sealedSecret: webhooks.secretSeal.seal(secret, name: request.name), createdAt: now
        )
        let addition = try await stored { () async throws(NotificationStorageError) in
            try await storage.addWebhookEndpoint(
                endpoint, groupOwner: ownership.groupsOwned ? NotificationsContract.serviceName : nil, limit: webhooks.maxStoredEndpoints, at: now
            )
        }
        switch addition {
        case .added: break
        case .nameTaken: throw .webhookExists(request.name)
        case .limitReached: throw .webhookLimit(webhooks.maxStoredEndpoints)
        }
        logger.info("webhook endpoint added", metadata: ["konto.webhook": "\(request.name)"])
        webhookEndpointsChanged.notify()
        return NotificationsWebhookAdded(
            endpoint: Self.listed(WebhookEndpoint(name: request.name, url: url, types: types, source: .api), createdAt: now),
            secret: made
        )
    }

    /// ``NotificationsContract/removeWebhookEndpoint``: an API's endpoint, with its queued and failed deliveries.
    public func removeWebhookEndpoint(_ request: NotificationsRemoveWebhookRequest) async throws(ServiceError) -> NotificationsWebhookRemoved {
        guard WebhookEndpoint.isValidName(request.name) else { throw .notificationsInvalidRequest(WebhookEndpoint.nameRule) }
        guard !webhooks.fileEndpoints.contains(where: { $0.name == request.name }) else { throw .webhookInFile(request.name) }
        let dropped = try await stored { () async throws(NotificationStorageError) in try await storage.removeWebhookEndpoint(named: request.name) }
        guard let dropped else { throw .unknownWebhook(request.name) }
        logger.info("webhook endpoint removed", metadata: ["konto.webhook": "\(request.name)", "konto.count": "\(dropped)"])
        webhookEndpointsChanged.notify()
        return NotificationsWebhookRemoved(droppedDeliveries: dropped)
    }

    /// Every endpoint to deliver to now: the file's, then the stored ones whose secret opens under this deployment's
    /// key and whose name no file endpoint has (the file's wins). `skipped` gets the names of those left out.
    func deliverableWebhookEndpoints(skipped: (String, String) -> Void = { _, _ in }) async throws(NotificationStorageError) -> [WebhookEndpoint] {
        let fileNames = Set(webhooks.fileEndpoints.map(\.name))
        var endpoints = webhooks.fileEndpoints
        for stored in try await storage.webhookEndpoints() {
            if fileNames.contains(stored.name) {
                skipped(stored.name, "a file endpoint has its name")
            } else if let secret = webhooks.secretSeal.open(stored.sealedSecret, name: stored.name), let url = URL(string: stored.url) {
                endpoints.append(WebhookEndpoint(
                    name: stored.name, url: url, secret: secret, types: stored.types, insecure: url.scheme?.lowercased() == "http", source: .api
                ))
            } else {
                skipped(stored.name, "its secret does not open with this deployment's key")
            }
        }
        return endpoints
    }

    private static func listed(_ endpoint: WebhookEndpoint, createdAt: Timestamp?) -> NotificationsWebhookEndpoint {
        NotificationsWebhookEndpoint(
            name: endpoint.name, url: endpoint.listedURL, types: endpoint.types, source: endpoint.source,
            deliversResetTokens: endpoint.deliversResetTokens, createdAt: createdAt
        )
    }

    /// 32 random bytes as Standard Webhooks writes a secret.
    private static func makeSecret() -> String {
        WebhookSecret.prefix + SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }
}
