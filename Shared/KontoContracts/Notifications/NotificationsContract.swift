import KontoModel
import KontoWire

/// The Notifications service's contract: durable account events (SpeziAccount's AccountNotifications across
/// services), delivered at least once and in order per account to every consumer group.
///
/// Producers publish from their outbox (``publish``); Notifications stores each event once (by its id). Services
/// consume through ``subscribe`` (a wire subscription per consumer, shared work within a group), the Gateway
/// streams one account's events through ``feed``, and operators look at and replay dead letters.
public enum NotificationsContract {
    public static let serviceName = "notifications"
    /// Where the service listens unless configured otherwise, and where its callers look for it.
    public static let defaultPort = 7403
    /// Raised when a method's request or response changes incompatibly.
    public static let version = 1

    /// Stores events (a relay's batch); an event already stored (same id) is counted as a duplicate, not stored again.
    public static let publish = WireMethod<NotificationsPublishRequest, NotificationsPublished>("notifications.publish")
    /// Creates a consumer group (or checks an existing one's types). A group receives the events stored after it was
    /// created, so a consumer declares its group before the events it must not miss can be published (at its first
    /// start), then subscribes; a subscription to a group not declared yet creates it too.
    public static let declareGroup = WireMethod<NotificationsSubscribeRequest, NotificationsGroupDeclared>("notifications.declareGroup")
    /// A subscription: the group's events, each to one consumer of the group at a time, in order per account.
    /// The wire topic is the event's type. Acks: processed; retry (with back-off, dead letter after the group's
    /// maximum attempts); reject (dead letter now).
    public static let subscribe = WireSubscriptionMethod<NotificationsSubscribeRequest, AccountEvent>("notifications.subscribe")
    /// A subscription: one account's events after a given event (or from its first), then new ones as they come.
    public static let feed = WireSubscriptionMethod<NotificationsFeedRequest, AccountEvent>("notifications.feed")
    /// One account's events still kept (at most ``NotificationsAccountHistory/maximumEvents``, the newest), oldest
    /// first: for the owner's copy of their data, which the Gateway assembles.
    public static let accountHistory = WireMethod<NotificationsAccountHistoryRequest, NotificationsAccountHistory>("notifications.accountHistory")
    /// Where a tail starts now: every event stored after this call answered comes after the cursor it returns.
    public static let tailCursor = WireMethod<NotificationsTailCursorRequest, NotificationsTailCursor>("notifications.tailCursor")
    /// A subscription: every account's events stored after a cursor (of the asked types), in the store's order,
    /// then new ones as they are stored. Nothing is kept for the subscriber (no group, no redelivery): for caches
    /// that drop what an event touches (the gateway), which start afresh from a new cursor when a tail ends.
    public static let tail = WireSubscriptionMethod<NotificationsTailRequest, AccountEvent>("notifications.tail")
    /// Waits until every live cache-holding tail reader has acknowledged a change's events, so a gateway's answer to a
    /// logout is not followed by another gateway serving the ended session from its cache (docs/SCALING.md).
    public static let tailBarrier = WireMethod<NotificationsTailBarrierRequest, NotificationsTailBarrier>("notifications.tailBarrier")
    public static let deadLetters = WireMethod<NotificationsDeadLettersRequest, NotificationsDeadLetters>("notifications.deadLetters")
    /// Puts dead letters back for delivery (all of the group's, or the listed events').
    public static let replayDeadLetters = WireMethod<NotificationsReplayDeadLettersRequest, NotificationsReplayed>("notifications.replayDeadLetters")
    /// The deliveries Notifications itself gave up on (its mail courier's, group `mail`, and its webhooks', groups
    /// `webhook:<name>`), for the admin API: which event, of which type and account, when, how often tried and why
    /// given up; never the event's content (a reset link's sealed token, an address). The Gateway may call it (it
    /// cannot read ``deadLetters``); the operator's key is checked by Identity before.
    public static let failedDeliveries = WireMethod<NotificationsDeadLettersRequest, NotificationsFailedDeliveries>("notifications.failedDeliveries")
    /// Delivers them again (all of a delivery group's, or the listed events'), as ``replayDeadLetters`` does.
    public static let redeliver = WireMethod<NotificationsReplayDeadLettersRequest, NotificationsReplayed>("notifications.redeliver")
    /// The webhook endpoints: the deployment's file's and those added through the admin API (never a secret).
    public static let webhookEndpoints = WireMethod<NotificationsWebhookEndpointsRequest, NotificationsWebhookEndpoints>("notifications.webhookEndpoints")
    /// Adds an endpoint at run time: every replica delivers to it within its reload interval; events stored from the
    /// answer on are queued for it. Such an endpoint never gets a reset token opened (only the file can make one that
    /// does). Like the failed deliveries, for the admin API after Identity checked the operator's key.
    public static let addWebhookEndpoint = WireMethod<NotificationsAddWebhookRequest, NotificationsWebhookAdded>("notifications.addWebhookEndpoint")
    /// Removes an endpoint added through the API, with its queued and failed deliveries.
    public static let removeWebhookEndpoint = WireMethod<NotificationsRemoveWebhookRequest, NotificationsWebhookRemoved>("notifications.removeWebhookEndpoint")
    /// Delivers again, to one group, every stored event since a point in time (deduplicated against what is queued).
    public static let replay = WireMethod<NotificationsReplayRequest, NotificationsReplayed>("notifications.replay")

    public static let methods = [
        publish.name, declareGroup.name, subscribe.name, feed.name, accountHistory.name, tailCursor.name, tail.name, tailBarrier.name, deadLetters.name, replayDeadLetters.name, replay.name,
        failedDeliveries.name, redeliver.name, webhookEndpoints.name, addWebhookEndpoint.name, removeWebhookEndpoint.name, HealthContract.check.name,
    ]

    /// Every code a Notifications method may answer with (besides the wire layer's).
    public static let errorCodes: [KontoErrorCode] = KontoErrorCode.codes(of: .notifications)

    /// The codes each method answers with (besides the wire layer's), as the store raises them; the union is
    /// ``errorCodes``. A subscription answers with its error by ending at once. Each pair has a recorded example in
    /// `Tests/Contracts/notifications` (the storage codes with the database stopped or its tables gone).
    public static let errorCodesByMethod: [String: [KontoErrorCode]] = {
        let invalid = KontoErrorCode.notificationsInvalidRequest
        let storage = [KontoErrorCode.notificationsStorageUnavailable, KontoErrorCode.notificationsStorageFailure]
        return [
            publish.name: [invalid] + storage,
            declareGroup.name: [invalid, KontoErrorCode.notificationsGroupMismatch] + storage,
            subscribe.name: [invalid, KontoErrorCode.notificationsGroupMismatch] + storage,
            feed.name: [invalid, KontoErrorCode.notificationsUnknownEvent] + storage,
            accountHistory.name: [invalid] + storage,
            tailCursor.name: storage,
            tail.name: [invalid] + storage,
            tailBarrier.name: [invalid] + storage,
            deadLetters.name: [invalid, KontoErrorCode.notificationsUnknownGroup] + storage,
            replayDeadLetters.name: [invalid, KontoErrorCode.notificationsUnknownGroup] + storage,
            replay.name: [invalid, KontoErrorCode.notificationsUnknownGroup] + storage,
            failedDeliveries.name: [invalid, KontoErrorCode.notificationsUnknownGroup] + storage,
            redeliver.name: [invalid, KontoErrorCode.notificationsUnknownGroup] + storage,
            webhookEndpoints.name: storage,
            addWebhookEndpoint.name: [invalid, KontoErrorCode.notificationsWebhookExists, KontoErrorCode.notificationsWebhookLimit] + storage,
            removeWebhookEndpoint.name: [invalid, KontoErrorCode.notificationsUnknownWebhook, KontoErrorCode.notificationsWebhookInFile] + storage,
            // A report, never an error: an unreachable database is a check with status notReady.
            HealthContract.check.name: [],
        ]
    }()

    /// Declared pairs without a recorded example, each with the reason no replay can provoke it.
    public static let exemptions: [ContractExemption] = [
        ContractExemption(
            tailCursor.name,
            KontoErrorCode.notificationsStorageFailure,
            reason: "it reads no table (SELECT pg_current_snapshot()): only an unexpected server error, such as the server running out of memory, fails it other than as unavailable, which a replay cannot bring about without breaking the server itself"
        ),
    ]


    /// The event types a group may ask for (``AccountEvent/Kind/name``).
    public static let eventTypes: Set<String> = [
        "associatedAccount", "detailsChanged", "disassociatingAccount", "deletingAccount", "passwordResetRequested",
        "passwordChanged", "userIdChanged", "sessionsRevoked", "factorAdded", "factorRemoved", "recoveryCodeUsed",
        "emailVerified", "identityLinked", "identityUnlinked", "mailRequested", "accountDisabled", "accountEnabled",
    ]

    /// The most events one publish may carry.
    public static let maximumPublishBatch = 1_000
    /// The longest group name, in UTF-8 bytes.
    public static let maximumGroupNameLength = 128
    /// The most events one barrier waits for.
    public static let maximumBarrierEvents = 64
    /// The longest a barrier waits.
    public static let maximumBarrierTimeoutMilliseconds = 10_000
    /// The most dead letters one listing returns.
    public static let maximumListing = 1_000

    /// The mail courier's consumer group.
    public static let mailGroup = "mail"

    /// Whether `group` is one of Notifications' own deliveries: the mail courier's or a webhook's.
    public static func isDeliveryGroup(_ group: String) -> Bool {
        group == mailGroup || (group.hasPrefix("webhook:") && group.utf8.count > "webhook:".utf8.count)
    }
}
