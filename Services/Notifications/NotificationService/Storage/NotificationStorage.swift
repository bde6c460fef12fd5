import Foundation
import KontoModel

/// Where Notifications keeps events, consumer groups, their queued deliveries and dead letters: PostgreSQL, or
/// memory for the dev stack and unit tests. One conformance suite covers both.
///
/// Every stored event is queued once for each group whose types match it, when it is stored (or when a group is
/// replayed). A group's deliveries are claimed oldest first, never one whose account has an earlier delivery still
/// queued in the group (claimed, waiting for a retry, or due), so each group sees each account's events in order.
/// A claim makes the delivery invisible to other claims until its visibility timeout; acknowledging, retrying,
/// rejecting or releasing it needs that claim's id, so a consumer whose claim timed out (and was claimed again)
/// cannot act on it any more. Each call is atomic.
public protocol NotificationStorage: Sendable {
    /// Stores the events whose ids are new, in order, and queues each for every group whose types match.
    func append(_ events: [AccountEvent], at now: Timestamp) async throws(NotificationStorageError) -> AppendOutcome

    /// Creates the group with its types (nil: every type), or checks that an existing one has the same types.
    /// `owner`: the caller that declares it (the store names Notifications itself for its own groups); a group owned
    /// by another is `.foreign`; one without an owner (declared before groups had owners, or with `owner` nil)
    /// becomes the next declaring caller's.
    func ensureGroup(_ name: String, types: [String]?, owner: String?, at now: Timestamp) async throws(NotificationStorageError) -> GroupOutcome

    func groupExists(_ name: String) async throws(NotificationStorageError) -> Bool
    /// The group's owner: nil when there is no such group, `.some(nil)` for one without an owner.
    func groupOwner(_ name: String) async throws(NotificationStorageError) -> String??

    /// Claims up to `limit` of the group's deliveries due at `now` (see the protocol's rules), each invisible to
    /// other claims until `now + visibility`, with its attempts counted. A due delivery already claimed
    /// `maxAttempts` times (its consumers kept timing out) goes to dead letter instead.
    func claim(group: String, limit: Int, at now: Timestamp, visibility: Duration, maxAttempts: Int) async throws(NotificationStorageError) -> [ClaimedDelivery]

    /// Processed: the deliveries are done, in one atomic call. Returns how many of the claims were current (a claim
    /// that timed out and was claimed again acknowledges nothing).
    func acknowledge(_ claims: [DeliveryClaim]) async throws(NotificationStorageError) -> Int

    /// Not processed: due again at `retryAt`, or dead letter once it has been attempted `maxAttempts` times.
    func retry(_ claim: DeliveryClaim, reason: String, retryAt: Timestamp, maxAttempts: Int, at now: Timestamp) async throws(NotificationStorageError) -> RetryOutcome

    /// Never processable: dead letter now. False when `claim` is not current.
    func reject(_ claim: DeliveryClaim, reason: String, at now: Timestamp) async throws(NotificationStorageError) -> Bool

    /// Its consumer went away without an outcome: due again at once (its attempt still counts).
    func release(_ claim: DeliveryClaim, at now: Timestamp) async throws(NotificationStorageError)

    /// The earliest moment a queued delivery of the group becomes due, if any is waiting (a retry's back-off, a
    /// claim's visibility): when a consumer with nothing to claim should look again.
    func nextDue(group: String) async throws(NotificationStorageError) -> Timestamp?

    /// The group's dead letters, oldest event first.
    func deadLetters(group: String, limit: Int) async throws(NotificationStorageError) -> [DeadLetter]

    /// Queues dead letters again with fresh attempts (the listed events', or all). Returns how many.
    func replayDeadLetters(group: String, eventIds: [UUID]?, at now: Timestamp) async throws(NotificationStorageError) -> Int

    /// Queues again, for one group, every matching event that occurred at or after `from` and is not queued for it
    /// already. Returns how many.
    func replay(group: String, from: Timestamp, at now: Timestamp) async throws(NotificationStorageError) -> Int

    /// One account's settled events after `cursor` (nil: from its first), in the tail's order (see ``TailCursor``:
    /// on PostgreSQL by storing transaction, so an event committed after a later-numbered one is not skipped).
    func accountEvents(accountId: String, after cursor: TailCursor?, limit: Int) async throws(NotificationStorageError) -> [TailedEvent]
    /// Where the account's event with this id is in that order; nil when there is none.
    func cursor(ofEvent id: UUID, accountId: String) async throws(NotificationStorageError) -> TailCursor?
    /// Where a tail starts now: every event stored (committed) after this returns comes after the cursor.
    func tailCursor() async throws(NotificationStorageError) -> TailCursor
    /// Events after `cursor` (of `types`; nil: every type) whose place in the tail's order is settled — no event can
    /// still appear before them — in that order.
    func tail(after cursor: TailCursor, types: [String]?, limit: Int) async throws(NotificationStorageError) -> [TailedEvent]

    // Cache-holding tail readers (the gateways'), for `notifications.tailBarrier`: registered where the tail starts,
    // their acknowledged place in the tail's order recorded and their lease renewed by the replica serving the tail.

    /// Registers a reader whose tail starts at `start`, leased until `leaseUntil`; forgets readers whose lease ended
    /// before `now`.
    func registerTailReader(_ id: UUID, start: TailCursor, leaseUntil: Timestamp, at now: Timestamp) async throws(NotificationStorageError)
    /// Records that the reader has acknowledged every event up to `acknowledged` (if given) and renews its lease.
    /// False when the reader is unknown or its lease had ended by `now` (a barrier may have stopped waiting for it).
    func renewTailReader(_ id: UUID, acknowledged: TailCursor?, leaseUntil: Timestamp, at now: Timestamp) async throws(NotificationStorageError) -> Bool
    func removeTailReader(_ id: UUID) async throws(NotificationStorageError)
    /// The readers whose lease runs past `now`.
    func liveTailReaders(at now: Timestamp) async throws(NotificationStorageError) -> [UUID]
    /// How many of `readers`, leased past `now`, have yet to acknowledge some of the events (an event their tail
    /// started after counts as acknowledged); nil while some of the events are not stored yet.
    func tailReadersBehind(_ readers: [UUID], eventIds: [UUID], at now: Timestamp) async throws(NotificationStorageError) -> Int?

    /// Records one webhook delivery attempt in the endpoint's delivery log.
    func logWebhookAttempt(_ attempt: WebhookAttempt) async throws(NotificationStorageError)

    /// The endpoint's latest delivery attempts, newest first.
    func webhookAttempts(endpoint: String, limit: Int) async throws(NotificationStorageError) -> [WebhookAttempt]

    /// The webhook endpoints added through the admin API, by name.
    func webhookEndpoints() async throws(NotificationStorageError) -> [StoredWebhookEndpoint]

    /// Adds an endpoint and creates its group (`webhook:<name>`, for its types, owned by `groupOwner`) at once, so
    /// every event stored after this returns is queued for it; whatever a former group of that name left (deliveries,
    /// dead letters, delivery log, the group itself) is dropped first, so a new receiver never gets an old one's
    /// events. Nothing changes when an endpoint of that name is stored already, or `limit` endpoints are: the count
    /// and the insert are one step however many replicas add at once.
    func addWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, groupOwner: String?, limit: Int, at now: Timestamp) async throws(NotificationStorageError) -> WebhookEndpointAddition

    /// Removes a stored endpoint with its group, queued deliveries, dead letters and delivery log; answers how many
    /// deliveries (queued or dead) were dropped, nil when no endpoint of that name is stored.
    func removeWebhookEndpoint(named name: String) async throws(NotificationStorageError) -> Int?

    /// Erases what deleted accounts left in the events: an account whose `deletingAccount` was stored is erased once
    /// no delivery of its events is queued in any group (each group has processed the deletion), or once the
    /// deletion was stored before `graceCutoff` however far behind a group is. Erasing deletes every other event of
    /// the account (with its queued deliveries and dead letters); the deletion event, which holds ids only, stays
    /// until retention. An event the account gets after it was erased is erased by a later call. Returns how many
    /// accounts were erased.
    func eraseDeletedAccounts(graceCutoff: Timestamp, limit: Int, at now: Timestamp) async throws(NotificationStorageError) -> Int

    /// Retention: deletes up to `limit` events stored before `cutoff` that no group still has queued or in dead
    /// letter, and the webhook delivery log and erasure records from before it. Returns how many events.
    func prune(before cutoff: Timestamp, limit: Int) async throws(NotificationStorageError) -> Int

    func checkHealth() async throws(NotificationStorageError)

    /// Calls `changed` once it watches (anything stored before may not have been seen) and then whenever events or
    /// deliveries were stored by any process sharing this storage; returns or throws only when the watch ends
    /// (cancelled, or the connection lost). A storage only this process uses has nothing to watch: it waits until
    /// cancelled, since its own stores wake their readers directly.
    func watchPublished(_ changed: @escaping @Sendable () -> Void) async throws
}

/// What ``NotificationStorage/addWebhookEndpoint(_:groupOwner:limit:at:)`` did.
public enum WebhookEndpointAddition: Sendable, Equatable {
    case added
    /// An endpoint of that name is stored.
    case nameTaken
    /// As many endpoints as the limit are stored.
    case limitReached
}

/// A webhook endpoint added through the admin API, as stored: its secret sealed (``WebhookSecretSeal``).
public struct StoredWebhookEndpoint: Sendable, Equatable {
    public var name: String
    public var url: String
    public var types: [String]?
    /// The signing secret, sealed with the deployment's key for this endpoint's name.
    public var sealedSecret: String
    public var createdAt: Timestamp

    public init(name: String, url: String, types: [String]?, sealedSecret: String, createdAt: Timestamp) {
        self.name = name
        self.url = url
        self.types = types
        self.sealedSecret = sealedSecret
        self.createdAt = createdAt
    }
}

/// One POST of an event to a webhook endpoint, as the delivery log keeps it.
public struct WebhookAttempt: Sendable, Equatable {
    public var endpoint: String
    public var eventId: UUID
    /// The delivery's attempt number (1 for the first).
    public var attempt: Int
    /// The HTTP status, when the endpoint answered.
    public var statusCode: Int?
    /// Why it failed, when it did (never the secret, never the body).
    public var error: String?
    public var durationMilliseconds: Int
    public var at: Timestamp

    public init(endpoint: String, eventId: UUID, attempt: Int, statusCode: Int?, error: String?, durationMilliseconds: Int, at: Timestamp) {
        self.endpoint = endpoint
        self.eventId = eventId
        self.attempt = attempt
        self.statusCode = statusCode
        self.error = error
        self.durationMilliseconds = durationMilliseconds
        self.at = at
    }

    public var succeeded: Bool { statusCode.map { (200..<300).contains($0) } ?? false }
}

extension NotificationStorage {
    /// Processed: the delivery is done. False when `claim` is not the delivery's current claim.
    public func acknowledge(_ claim: DeliveryClaim) async throws(NotificationStorageError) -> Bool {
        try await acknowledge([claim]) == 1
    }
}

public struct AppendOutcome: Sendable, Equatable {
    public var stored: Int
    public var duplicates: Int

    public init(stored: Int, duplicates: Int) {
        self.stored = stored
        self.duplicates = duplicates
    }
}

public enum GroupOutcome: Sendable, Equatable {
    case created
    case existing
    /// The group exists with other types.
    case mismatch
    /// The group belongs to another caller.
    case foreign
}

extension NotificationStorage {
    /// A group without an owner.
    public func ensureGroup(_ name: String, types: [String]?, at now: Timestamp) async throws(NotificationStorageError) -> GroupOutcome {
        try await ensureGroup(name, types: types, owner: nil, at: now)
    }
}

/// One claim of one delivery: which group, which event (its position), and which claim.
public struct DeliveryClaim: Sendable, Hashable {
    public var group: String
    public var position: Int64
    public var claimID: UUID

    public init(group: String, position: Int64, claimID: UUID) {
        self.group = group
        self.position = position
        self.claimID = claimID
    }
}

public struct ClaimedDelivery: Sendable, Equatable {
    public var claim: DeliveryClaim
    public var event: AccountEvent
    /// Claims so far, this one included.
    public var attempts: Int

    public init(claim: DeliveryClaim, event: AccountEvent, attempts: Int) {
        self.claim = claim
        self.event = event
        self.attempts = attempts
    }
}

public enum RetryOutcome: Sendable, Equatable {
    case scheduled
    case deadLettered
    /// The claim is not current (timed out and claimed again, or already answered).
    case stale
}

public struct DeadLetter: Sendable, Equatable {
    public var event: AccountEvent
    public var attempts: Int
    public var lastError: String?
    public var deadAt: Timestamp

    public init(event: AccountEvent, attempts: Int, lastError: String?, deadAt: Timestamp) {
        self.event = event
        self.attempts = attempts
        self.lastError = lastError
        self.deadAt = deadAt
    }
}

/// Notifications' storage errors are the services' one ``StorageError`` (only `unavailable` and `failure` occur).
public typealias NotificationStorageError = StorageError
