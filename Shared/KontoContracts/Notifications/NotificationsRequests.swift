import Foundation
import KontoModel

public struct NotificationsPublishRequest: Codable, Sendable, Equatable {
    public var events: [AccountEvent]

    public init(events: [AccountEvent]) {
        self.events = events
    }
}

public struct NotificationsPublished: Codable, Sendable, Equatable {
    /// Events stored now.
    public var stored: Int
    /// Events that were stored already (a relay sending again after a lost answer).
    public var duplicates: Int

    public init(stored: Int, duplicates: Int) {
        self.stored = stored
        self.duplicates = duplicates
    }
}

public struct NotificationsSubscribeRequest: Codable, Sendable, Equatable {
    /// The consumer group: consumers with the same group share its events, each event going to one of them.
    public var group: String
    /// The event types the group receives (``AccountEvent/Kind/name``); nil for every type. Fixed when the group is
    /// created by its first subscription; a new group receives events published from then on.
    public var types: [String]?

    public init(group: String, types: [String]? = nil) {
        self.group = group
        self.types = types
    }
}

public struct NotificationsGroupDeclared: Codable, Sendable, Equatable {
    /// False when the group existed already (with the same types).
    public var created: Bool

    public init(created: Bool) {
        self.created = created
    }
}

public struct NotificationsFeedRequest: Codable, Sendable, Equatable {
    public var accountId: String
    /// Start after this event (the last one the reader saw); with neither this nor `afterCursor`, at the account's
    /// first stored event.
    public var after: UUID?
    /// Without `after`: start after this cursor from `notifications.tailCursor`, i.e. only events stored after the
    /// reader asked for it (a new reader is not shown the account's history, yet misses nothing stored after it
    /// asked).
    public var afterCursor: String?

    public init(accountId: String, after: UUID? = nil, afterCursor: String? = nil) {
        self.accountId = accountId
        self.after = after
        self.afterCursor = afterCursor
    }
}

public struct NotificationsDeadLettersRequest: Codable, Sendable, Equatable {
    public var group: String
    public var limit: Int

    public init(group: String, limit: Int = 100) {
        self.group = group
        self.limit = limit
    }
}

/// An event the group gave up on: rejected by a consumer, or retried (or timed out) too many times.
public struct NotificationsDeadLetter: Codable, Sendable, Equatable {
    public var event: AccountEvent
    public var attempts: Int
    /// The last negative ack's reason, or why it was given up.
    public var lastError: String?
    public var deadAt: Timestamp

    public init(event: AccountEvent, attempts: Int, lastError: String?, deadAt: Timestamp) {
        self.event = event
        self.attempts = attempts
        self.lastError = lastError
        self.deadAt = deadAt
    }
}

/// A delivery Notifications gave up on, as an operator may see it: never the event's content.
public struct NotificationsFailedDelivery: Codable, Sendable, Equatable {
    public var eventId: UUID
    /// The event's type (`mailRequested` for mail).
    public var type: String
    public var accountId: String
    public var occurredAt: Timestamp
    /// For mail, which message it was (`passwordReset`, `verifyEmail` …).
    public var message: String?
    public var attempts: Int
    public var lastError: String?
    public var deadAt: Timestamp

    public init(eventId: UUID, type: String, accountId: String, occurredAt: Timestamp, message: String?, attempts: Int, lastError: String?, deadAt: Timestamp) {
        self.eventId = eventId
        self.type = type
        self.accountId = accountId
        self.occurredAt = occurredAt
        self.message = message
        self.attempts = attempts
        self.lastError = lastError
        self.deadAt = deadAt
    }
}

public struct NotificationsFailedDeliveries: Codable, Sendable, Equatable {
    /// Oldest event first.
    public var deliveries: [NotificationsFailedDelivery]

    public init(deliveries: [NotificationsFailedDelivery]) {
        self.deliveries = deliveries
    }
}

public struct NotificationsDeadLetters: Codable, Sendable, Equatable {
    /// Oldest event first.
    public var letters: [NotificationsDeadLetter]

    public init(letters: [NotificationsDeadLetter]) {
        self.letters = letters
    }
}

public struct NotificationsReplayDeadLettersRequest: Codable, Sendable, Equatable {
    public var group: String
    /// The events to deliver again; nil for every dead letter of the group.
    public var eventIds: [UUID]?

    public init(group: String, eventIds: [UUID]? = nil) {
        self.group = group
        self.eventIds = eventIds
    }
}

public struct NotificationsReplayRequest: Codable, Sendable, Equatable {
    public var group: String
    /// Every event that occurred at or after this time is delivered to the group again.
    public var from: Timestamp

    public init(group: String, from: Timestamp) {
        self.group = group
        self.from = from
    }
}

public struct NotificationsReplayed: Codable, Sendable, Equatable {
    /// Events queued for delivery again.
    public var replayed: Int

    public init(replayed: Int) {
        self.replayed = replayed
    }
}

/// Asks where a tail starts now; with `holdsCache`, also registers the caller as a reader that caches what the tail
/// keeps honest, which ``NotificationsContract/tailBarrier`` then waits for.
public struct NotificationsTailCursorRequest: Codable, Sendable, Equatable {
    /// The tail to come feeds a cache (the gateway's): the answer names a reader, leased for a while, to subscribe
    /// with. Optional: nil is false.
    public var holdsCache: Bool?
    /// The reader this one replaces (the same cache's, whose tail ended and whose cache emptied): removed at once, so
    /// barriers do not wait for it until its lease ends (Notifications restarted, or the tail ended for being slow).
    public var replacing: UUID?

    public init(holdsCache: Bool? = nil, replacing: UUID? = nil) {
        self.holdsCache = holdsCache
        self.replacing = replacing
    }
}

/// An opaque position in the store's order, for ``NotificationsContract/tail``.
public struct NotificationsTailCursor: Codable, Sendable, Equatable {
    public var cursor: String
    /// The reader registered for a request that `holdsCache`: a tail subscribed with it records its acknowledgements
    /// and keeps its lease.
    public var readerId: UUID?

    public init(cursor: String, readerId: UUID? = nil) {
        self.cursor = cursor
        self.readerId = readerId
    }
}

public struct NotificationsTailRequest: Codable, Sendable, Equatable {
    /// A cursor from ``NotificationsContract/tailCursor``: the tail gives every event stored after it.
    public var after: String
    /// The event types wanted (``AccountEvent/Kind/name``); nil for every type.
    public var types: [String]?
    /// The reader ``NotificationsContract/tailCursor`` registered with `after` (every type only): while the tail
    /// runs its acknowledgements are recorded and its lease renewed; a reader too slow to acknowledge, or whose lease
    /// could not be renewed, has its tail ended (its cache must then empty, as for any tail that ends).
    public var readerId: UUID?

    public init(after: String, types: [String]? = nil, readerId: UUID? = nil) {
        self.after = after
        self.types = types
        self.readerId = readerId
    }
}

/// Waits until every cache-holding tail reader that was live when the call came has acknowledged the listed events
/// (or stopped being live), for at most `timeoutMilliseconds`.
public struct NotificationsTailBarrierRequest: Codable, Sendable, Equatable {
    /// The events a change wrote, 1 to ``NotificationsContract/maximumBarrierEvents``.
    public var eventIds: [UUID]
    /// How long to wait at most, 0 to ``NotificationsContract/maximumBarrierTimeoutMilliseconds``.
    public var timeoutMilliseconds: Int

    public init(eventIds: [UUID], timeoutMilliseconds: Int) {
        self.eventIds = eventIds
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}

public struct NotificationsTailBarrier: Codable, Sendable, Equatable {
    /// Every reader has the events (or none was live): no cache serves what they changed any more.
    public var complete: Bool
    /// Readers still without all of them when the wait ended (0 when complete).
    public var readersBehind: Int

    public init(complete: Bool, readersBehind: Int) {
        self.complete = complete
        self.readersBehind = readersBehind
    }
}

/// One account's events still kept (``NotificationsContract/accountHistory``), for its owner's copy of their data.
public struct NotificationsAccountHistoryRequest: Codable, Sendable, Equatable {
    public var accountId: String

    public init(accountId: String) {
        self.accountId = accountId
    }
}

/// The account's newest events, oldest first, as stored (a mail request's sealed secret included: the caller strips
/// it before anyone sees it).
public struct NotificationsAccountHistory: Codable, Sendable, Equatable {
    /// The most events one answer carries: the newest; ``complete`` says whether older ones were left out.
    public static let maximumEvents = 1_000

    public var events: [AccountEvent]
    /// False when older events exist beyond those carried.
    public var complete: Bool

    public init(events: [AccountEvent], complete: Bool) {
        self.events = events
        self.complete = complete
    }
}
