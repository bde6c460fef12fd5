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
