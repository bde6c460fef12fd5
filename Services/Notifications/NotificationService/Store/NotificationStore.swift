import Foundation
import KontoContracts
import KontoModel
import KontoRuntime
import KontoWire
import Logging

/// The Notifications service's logic over its storage: publishing, consumer-group subscriptions with acks, retries
/// and dead letters, per-account feeds, and replay. Wire-independent except for the subscriptions it serves.
public final class NotificationStore: Sendable {
    let storage: any NotificationStorage
    let options: NotificationOptions
    let logger: Logger
    let clock: @Sendable () -> Timestamp
    /// Which caller may publish which type, and whether groups are their declarers' (``EventOwnership``).
    let ownership: EventOwnership
    /// Rung after every publish that stored something: waiting consumers look again at once.
    let published = Wakeup()
    /// The webhook endpoints (the file's; how the API's are sealed and checked).
    let webhooks: WebhookSettings
    /// Rung when an endpoint was added or removed through this replica: its dispatcher reloads at once.
    let webhookEndpointsChanged = Wakeup()

    public init(
        storage: any NotificationStorage, options: NotificationOptions = NotificationOptions(), ownership: EventOwnership = .konto,
        webhooks: WebhookSettings = WebhookSettings(), logger: Logger, clock: @escaping @Sendable () -> Timestamp = { .now }
    ) {
        self.storage = storage
        self.options = options
        self.ownership = ownership
        self.webhooks = webhooks
        self.logger = logger
        self.clock = clock
    }

    // MARK: Publishing

    /// - Parameter caller: the publishing service, which must own every event's type (nil: Notifications itself).
    public func publish(_ request: NotificationsPublishRequest, caller: String? = nil) async throws(ServiceError) -> NotificationsPublished {
        guard request.events.count <= NotificationsContract.maximumPublishBatch else {
            throw .notificationsInvalidRequest("at most \(NotificationsContract.maximumPublishBatch) events per publish")
        }
        if let caller, let foreign = request.events.first(where: { !ownership.mayPublish($0.kind.name, caller: caller) }) {
            throw .notificationsForbidden("'\(caller)' may not publish '\(foreign.kind.name)' events")
        }
        let outcome = try await stored { () async throws(NotificationStorageError) in
            try await storage.append(request.events, at: clock())
        }
        if outcome.stored > 0 {
            published.notify()
        }
        logger.debug("events published", metadata: ["konto.stored": "\(outcome.stored)", "konto.duplicates": "\(outcome.duplicates)"])
        return NotificationsPublished(stored: outcome.stored, duplicates: outcome.duplicates)
    }

    // MARK: Dead letters and replay

    public func deadLetters(_ request: NotificationsDeadLettersRequest, caller: String? = nil) async throws(ServiceError) -> NotificationsDeadLetters {
        try Self.checkGroupName(request.group)
        guard (1...NotificationsContract.maximumListing).contains(request.limit) else {
            throw .notificationsInvalidRequest("limit must be 1 to \(NotificationsContract.maximumListing)")
        }
        try await requireGroup(request.group, caller: caller)
        let letters = try await stored { () async throws(NotificationStorageError) in
            try await storage.deadLetters(group: request.group, limit: request.limit)
        }
        return NotificationsDeadLetters(letters: letters.map {
            NotificationsDeadLetter(event: $0.event, attempts: $0.attempts, lastError: $0.lastError, deadAt: $0.deadAt)
        })
    }

    public func replayDeadLetters(_ request: NotificationsReplayDeadLettersRequest, caller: String? = nil) async throws(ServiceError) -> NotificationsReplayed {
        try Self.checkGroupName(request.group)
        if let ids = request.eventIds, ids.count > NotificationsContract.maximumListing {
            throw .notificationsInvalidRequest("at most \(NotificationsContract.maximumListing) event ids")
        }
        try await requireGroup(request.group, caller: caller)
        let count = try await stored { () async throws(NotificationStorageError) in
            try await storage.replayDeadLetters(group: request.group, eventIds: request.eventIds, at: clock())
        }
        if count > 0 { published.notify() }
        logger.info("dead letters replayed", metadata: ["konto.group": "\(request.group)", "konto.count": "\(count)"])
        return NotificationsReplayed(replayed: count)
    }

    /// Notifications' own deliveries given up on (``NotificationsContract/failedDeliveries``): metadata only.
    public func failedDeliveries(_ request: NotificationsDeadLettersRequest) async throws(ServiceError) -> NotificationsFailedDeliveries {
        try Self.checkDeliveryGroup(request.group)
        guard (1...NotificationsContract.maximumListing).contains(request.limit) else {
            throw .notificationsInvalidRequest("limit must be 1 to \(NotificationsContract.maximumListing)")
        }
        try await requireGroup(request.group, caller: nil)
        let letters = try await stored { () async throws(NotificationStorageError) in
            try await storage.deadLetters(group: request.group, limit: request.limit)
        }
        return NotificationsFailedDeliveries(deliveries: letters.map { letter in
            var message: String?
            if case let .mailRequested(mail) = letter.event.kind { message = mail.message.rawValue }
            return NotificationsFailedDelivery(
                eventId: letter.event.id, type: letter.event.kind.name, accountId: letter.event.accountId, occurredAt: Timestamp(letter.event.time),
                message: message, attempts: letter.attempts, lastError: letter.lastError, deadAt: letter.deadAt
            )
        })
    }

    /// Delivers Notifications' own given-up deliveries again (``NotificationsContract/redeliver``).
    public func redeliver(_ request: NotificationsReplayDeadLettersRequest) async throws(ServiceError) -> NotificationsReplayed {
        try Self.checkDeliveryGroup(request.group)
        return try await replayDeadLetters(request, caller: nil)
    }

    static func checkDeliveryGroup(_ group: String) throws(ServiceError) {
        try checkGroupName(group)
        guard NotificationsContract.isDeliveryGroup(group) else {
            throw .notificationsInvalidRequest("'\(group)' is none of Notifications' deliveries: mail, or webhook:<name>")
        }
    }

    public func replay(_ request: NotificationsReplayRequest, caller: String? = nil) async throws(ServiceError) -> NotificationsReplayed {
        try Self.checkGroupName(request.group)
        try await requireGroup(request.group, caller: caller)
        let count = try await stored { () async throws(NotificationStorageError) in
            try await storage.replay(group: request.group, from: request.from, at: clock())
        }
        if count > 0 { published.notify() }
        logger.info("group replayed", metadata: ["konto.group": "\(request.group)", "konto.count": "\(count)"])
        return NotificationsReplayed(replayed: count)
    }

    // MARK: Helpers

    /// How the names of `caller`'s groups begin: its name and a dot (callers' names have no dots: lower-case
    /// letters, digits, - and _, as the verifiers file says), e.g. `profile.deletions`, `operator-billing.ledger`.
    public static func ownGroupPrefix(of caller: String) -> String { caller + "." }

    static func checkGroupName(_ group: String) throws(ServiceError) {
        guard !group.isEmpty, group.utf8.count <= NotificationsContract.maximumGroupNameLength else {
            throw .notificationsInvalidRequest("a group name has 1 to \(NotificationsContract.maximumGroupNameLength) bytes")
        }
    }

    /// The group exists and, where groups are owned, is `caller`'s (nil: Notifications itself), or has no owner.
    private func requireGroup(_ group: String, caller: String?) async throws(ServiceError) {
        let owner = try await stored { () async throws(NotificationStorageError) in try await storage.groupOwner(group) }
        guard let owner else { throw .unknownGroup(group) }
        if ownership.groupsOwned, let owner, owner != (caller ?? NotificationsContract.serviceName) {
            throw .notificationsForbidden("consumer group '\(group)' belongs to another service")
        }
    }

    /// Runs a storage call, turning its failure into the service's error.
    func stored<T: Sendable>(_ body: () async throws(NotificationStorageError) -> T) async throws(ServiceError) -> T {
        do {
            return try await body()
        } catch {
            switch error.code {
            case .unavailable: throw .notificationsStorageUnavailable
            // Notifications' storage answers missing or existing records in its results, never with these codes.
            case .failure, .notFound, .conflict: throw .notificationsStorageFailure
            }
        }
    }
}
