import Foundation
import KontoContracts
import KontoModel
import OpenAPIRuntime

/// The webhook endpoints, listed, added and removed at run time (docs/ADMIN.md, "Webhook endpoints"). As with the
/// failed deliveries, Identity checks the key's `deliveries:write` and writes the action to the audit log first;
/// Notifications keeps the endpoints and never sees the key.
extension GatewayAPI {
    func adminListWebhooks(_ input: Operations.AdminListWebhooks.Input) async throws -> Operations.AdminListWebhooks.Output {
        try await authorizeDeliveries(action: "webhooks.list")
        let found = try await upstreams.notifications(NotificationsContract.webhookEndpoints, NotificationsWebhookEndpointsRequest())
        return .ok(.init(body: .json(.init(webhooks: found.endpoints.map(Self.webhook)))))
    }

    func adminAddWebhook(_ input: Operations.AdminAddWebhook.Input) async throws -> Operations.AdminAddWebhook.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        // The action recorded names the endpoint and where it points; never the secret, nor what a URL may carry
        // beside its place (a receiver's token in the query, user info).
        try await authorizeDeliveries(action: "webhooks.add \(body.name) \(Self.auditedURL(body.url))")
        let added = try await upstreams.notifications(NotificationsContract.addWebhookEndpoint, NotificationsAddWebhookRequest(
            name: body.name, url: body.url, types: body.types, secret: body.secret
        ))
        return .created(.init(body: .json(.init(webhook: Self.webhook(added.endpoint), secret: added.secret))))
    }

    func adminRemoveWebhook(_ input: Operations.AdminRemoveWebhook.Input) async throws -> Operations.AdminRemoveWebhook.Output {
        try await authorizeDeliveries(action: "webhooks.remove \(input.path.name)")
        let removed = try await upstreams.notifications(NotificationsContract.removeWebhookEndpoint, NotificationsRemoveWebhookRequest(name: input.path.name))
        return .ok(.init(body: .json(.init(droppedDeliveries: removed.droppedDeliveries))))
    }

    /// A URL as the audit log keeps it: scheme, host, port and path only (at most 200 characters).
    static func auditedURL(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.scheme != nil, components.host != nil else { return "(not a URL)" }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return String((components.string ?? "(not a URL)").prefix(200))
    }

    private static func webhook(_ endpoint: NotificationsWebhookEndpoint) -> Components.Schemas.WebhookEndpoint {
        .init(
            name: endpoint.name, url: endpoint.url, types: endpoint.types, source: endpoint.source == .file ? .file : .api,
            deliversResetTokens: endpoint.deliversResetTokens, createdAt: endpoint.createdAt?.date
        )
    }
}
