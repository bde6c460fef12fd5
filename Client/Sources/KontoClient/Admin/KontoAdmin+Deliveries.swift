import Foundation
import OpenAPIRuntime

/// A delivery Notifications gave up on (docs/ADMIN.md, "Failed deliveries"): never the event's content.
public struct KontoFailedDelivery: Sendable, Equatable, Encodable {
    public var eventId: String
    public var type: String
    public var accountId: String
    public var occurredAt: Date
    /// For mail, which message.
    public var message: String?
    public var attempts: Int
    public var lastError: String?
    public var deadAt: Date
}

extension KontoAdmin {
    /// A delivery group's failed deliveries (`mail`, `webhook:<name>`), oldest first.
    public func failedDeliveries(group: String, limit: Int? = nil) async throws -> [KontoFailedDelivery] {
        switch try await client.call(token: key, { try await $0.adminListFailedDeliveries(query: .init(group: group, limit: limit)) }) {
        case .ok(let ok):
            return try ok.body.json.deliveries.map {
                KontoFailedDelivery(
                    eventId: $0.eventId, type: $0._type, accountId: $0.accountId, occurredAt: $0.occurredAt, message: $0.message, attempts: $0.attempts,
                    lastError: $0.lastError, deadAt: $0.deadAt
                )
            }
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Delivers a group's failed deliveries again (all, or the listed events'); answers how many were queued.
    public func redeliver(group: String, eventIds: [String]? = nil) async throws -> Int {
        switch try await client.call(token: key, { try await $0.adminRedeliver(body: .json(.init(group: group, eventIds: eventIds))) }) {
        case .ok(let ok): return try ok.body.json.redelivered
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }
}

/// A webhook endpoint (docs/ADMIN.md, "Webhook endpoints"): never its secret.
public struct KontoWebhookEndpoint: Sendable, Equatable, Encodable {
    public var name: String
    /// Without credentials or query.
    public var url: String
    /// nil: every type.
    public var types: [String]?
    /// `file` (the deployment's, changed only there) or `api`.
    public var source: String
    public var deliversResetTokens: Bool
    public var createdAt: Date?
}

/// An endpoint just added, with the secret made for it (shown this once; nil when one was given).
public struct KontoAddedWebhook: Sendable, Equatable, Encodable {
    public var webhook: KontoWebhookEndpoint
    public var secret: String?
}

extension KontoAdmin {
    /// The webhook endpoints: the file's, then those added through the API.
    public func webhooks() async throws -> [KontoWebhookEndpoint] {
        switch try await client.call(token: key, { try await $0.adminListWebhooks() }) {
        case .ok(let ok): return try ok.body.json.webhooks.map(Self.webhook)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Adds an endpoint; without `secret` one is made and answered once.
    public func addWebhook(name: String, url: String, types: [String]? = nil, secret: String? = nil) async throws -> KontoAddedWebhook {
        switch try await client.call(token: key, { try await $0.adminAddWebhook(body: .json(.init(name: name, url: url, types: types, secret: secret))) }) {
        case .created(let created):
            let body = try created.body.json
            return KontoAddedWebhook(webhook: Self.webhook(body.webhook), secret: body.secret)
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    /// Removes an endpoint added through the API; answers how many of its deliveries (queued or failed) were dropped.
    public func removeWebhook(name: String) async throws -> Int {
        switch try await client.call(token: key, { try await $0.adminRemoveWebhook(path: .init(name: name)) }) {
        case .ok(let ok): return try ok.body.json.droppedDeliveries
        case .default(let status, let problem): throw KontoClient.refusal(status, problem)
        }
    }

    private static func webhook(_ endpoint: Components.Schemas.WebhookEndpoint) -> KontoWebhookEndpoint {
        KontoWebhookEndpoint(
            name: endpoint.name, url: endpoint.url, types: endpoint.types, source: endpoint.source.rawValue,
            deliversResetTokens: endpoint.deliversResetTokens, createdAt: endpoint.createdAt
        )
    }
}
