import Foundation
import KontoModel

/// A webhook endpoint as an operator sees it (``NotificationsContract/webhookEndpoints``): never its secret.
public struct NotificationsWebhookEndpoint: Codable, Sendable, Equatable {
    /// Where it was made: the deployment's file (`KONTO_NOTIFICATIONS_WEBHOOKS`), changed only there, or the admin API.
    public enum Source: String, Codable, Sendable {
        case file, api
    }

    public var name: String
    /// The URL without credentials or query (either may hold a receiver's own token).
    public var url: String
    /// The event types it receives; nil for every type.
    public var types: [String]?
    public var source: Source
    /// Whether a reset event reaches it with its token opened: only a file's endpoint naming `passwordResetRequested`.
    public var deliversResetTokens: Bool
    /// When it was added through the API (nil for the file's).
    public var createdAt: Timestamp?

    public init(name: String, url: String, types: [String]?, source: Source, deliversResetTokens: Bool, createdAt: Timestamp?) {
        self.name = name
        self.url = url
        self.types = types
        self.source = source
        self.deliversResetTokens = deliversResetTokens
        self.createdAt = createdAt
    }
}

public struct NotificationsWebhookEndpointsRequest: Codable, Sendable, Equatable {
    public init() {}
}

public struct NotificationsWebhookEndpoints: Codable, Sendable, Equatable {
    /// The file's first, then the API's, each by name.
    public var endpoints: [NotificationsWebhookEndpoint]

    public init(endpoints: [NotificationsWebhookEndpoint]) {
        self.endpoints = endpoints
    }
}

public struct NotificationsAddWebhookRequest: Codable, Sendable, Equatable {
    /// Letters, digits, `-` and `_`, 1 to 64; its deliveries are the group `webhook:<name>`.
    public var name: String
    /// An https URL (http and local addresses only where the deployment allows them, for development).
    public var url: String
    /// Event types it receives; nil for every type.
    public var types: [String]?
    /// A signing secret as Standard Webhooks writes it (`whsec_…`); nil: Notifications makes one and answers it once.
    public var secret: String?

    public init(name: String, url: String, types: [String]? = nil, secret: String? = nil) {
        self.name = name
        self.url = url
        self.types = types
        self.secret = secret
    }
}

extension NotificationsAddWebhookRequest: CustomStringConvertible {
    /// Never shows the secret.
    public var description: String { "NotificationsAddWebhookRequest(\(name), \(secret == nil ? "secret made here" : "secret given"))" }
}

public struct NotificationsWebhookAdded: Codable, Sendable, Equatable {
    public var endpoint: NotificationsWebhookEndpoint
    /// The secret Notifications made, shown this once (nil when the request gave one).
    public var secret: String?

    public init(endpoint: NotificationsWebhookEndpoint, secret: String?) {
        self.endpoint = endpoint
        self.secret = secret
    }
}

extension NotificationsWebhookAdded: CustomStringConvertible {
    public var description: String { "NotificationsWebhookAdded(\(endpoint.name))" }
}

public struct NotificationsRemoveWebhookRequest: Codable, Sendable, Equatable {
    public var name: String

    public init(name: String) {
        self.name = name
    }
}

public struct NotificationsWebhookRemoved: Codable, Sendable, Equatable {
    /// Its deliveries still queued or failed, dropped with it.
    public var droppedDeliveries: Int

    public init(droppedDeliveries: Int) {
        self.droppedDeliveries = droppedDeliveries
    }
}
