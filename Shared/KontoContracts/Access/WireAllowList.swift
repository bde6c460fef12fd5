import KontoWire

/// Who may call what: each server's allow-list, written once beside the contracts (docs/PROTOCOL.md, "Who may call
/// what"). The names are the callers' service names, which the handshake proves (each service holds its own key).
///
/// Least privilege: the Gateway (the internet-facing process) cannot publish events, read the dead letters or create
/// and delete profiles; Profile cannot call Identity; Identity cannot read another service's feed. An operator's own
/// service (`operator-…`, e.g. `operator-billing`) may write the server-owned keys and consume events, never publish
/// them. Every caller may ask `health.check`.
public enum WireAllowList {
    /// The name the Gateway calls under.
    public static let gateway = "gateway"
    /// The family of an operator's own services: `operator-` and a name.
    public static let operators = "operator-*"

    /// Identity's server: every Identity method is the Gateway's to call.
    public static let identity = WireAuthorization([
        "*": [HealthContract.check.name],
        gateway: Set(IdentityContract.methods),
    ])

    /// Profile's server.
    public static let profile = WireAuthorization([
        "*": [HealthContract.check.name],
        gateway: [ProfileContract.load.name, ProfileContract.modify.name],
        // Modify for an operator's change through the admin API (identity.updateAccount), which Identity checks and audits.
        IdentityContract.serviceName: [ProfileContract.create.name, ProfileContract.load.name, ProfileContract.modify.name, ProfileContract.delete.name],
        operators: [ProfileContract.load.name, ProfileContract.modify.name],
    ])

    /// Notifications' server.
    public static let notifications = WireAuthorization([
        "*": [HealthContract.check.name],
        // The failed deliveries' metadata and their redelivery, and the webhook endpoints, for the admin API; never the
        // dead letters themselves.
        gateway: [
            NotificationsContract.feed.name, NotificationsContract.accountHistory.name, NotificationsContract.tailCursor.name, NotificationsContract.tail.name, NotificationsContract.tailBarrier.name,
            NotificationsContract.failedDeliveries.name, NotificationsContract.redeliver.name,
            NotificationsContract.webhookEndpoints.name, NotificationsContract.addWebhookEndpoint.name, NotificationsContract.removeWebhookEndpoint.name,
        ],
        IdentityContract.serviceName: [NotificationsContract.publish.name],
        ProfileContract.serviceName: [
            NotificationsContract.publish.name, NotificationsContract.declareGroup.name, NotificationsContract.subscribe.name,
        ],
        operators: NotificationsContract.consumerMethods,
    ])
}

extension NotificationsContract {
    /// What a consumer of events does: declare its group, subscribe, look at and replay its dead letters.
    public static let consumerMethods: Set<String> = [
        declareGroup.name, subscribe.name, deadLetters.name, replayDeadLetters.name, replay.name,
    ]
}
