import Foundation
import KontoContracts
import KontoModel
import OpenAPIRuntime

/// The deliveries Notifications gave up on (docs/ADMIN.md, "Failed deliveries"). Notifications does not check
/// operator keys: Identity checks the key and its scope first, and writes what is about to be done to the audit log
/// before the gateway asks Notifications, which gives the gateway the deliveries' metadata and their redelivery, never
/// the dead letters themselves.
extension GatewayAPI {
    func adminListFailedDeliveries(_ input: Operations.AdminListFailedDeliveries.Input) async throws -> Operations.AdminListFailedDeliveries.Output {
        let group = input.query.group
        try await authorizeDeliveries(action: "deliveries.list \(group)")
        let found = try await upstreams.notifications(NotificationsContract.failedDeliveries, NotificationsDeadLettersRequest(group: group, limit: input.query.limit ?? 100))
        return .ok(.init(body: .json(.init(deliveries: found.deliveries.map {
            .init(
                eventId: $0.eventId.uuidString.lowercased(), _type: $0.type, accountId: $0.accountId, occurredAt: $0.occurredAt.date, message: $0.message,
                attempts: $0.attempts, lastError: $0.lastError, deadAt: $0.deadAt.date
            )
        }))))
    }

    func adminRedeliver(_ input: Operations.AdminRedeliver.Input) async throws -> Operations.AdminRedeliver.Output {
        guard case .json(let body) = input.body else { throw GatewayProblem.malformed("The body must be JSON.") }
        var eventIds: [UUID]?
        if let texts = body.eventIds {
            eventIds = try texts.map { text throws(GatewayProblem) in
                guard let id = UUID(uuidString: text) else { throw GatewayProblem.malformed("An event id is a UUID.") }
                return id
            }
        }
        try await authorizeDeliveries(action: "deliveries.redeliver \(body.group)" + (eventIds.map { " \($0.count) events" } ?? ""))
        let replayed = try await upstreams.notifications(NotificationsContract.redeliver, NotificationsReplayDeadLettersRequest(group: body.group, eventIds: eventIds))
        return .ok(.init(body: .json(.init(redelivered: replayed.replayed))))
    }

    /// The key holds deliveries:write; the action is in the audit log before anything is done.
    func authorizeDeliveries(action: String) async throws(GatewayProblem) {
        _ = try await upstreams.identity(IdentityContract.operatorAuthorize, IdentityOperatorAuthorizeRequest(
            operatorCall: Self.operatorCall(), scope: .deliveriesWrite, action: action
        ))
    }
}
