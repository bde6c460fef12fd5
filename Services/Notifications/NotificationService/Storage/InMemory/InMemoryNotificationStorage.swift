import Foundation
import KontoModel
import Synchronization

/// Keeps events, groups, deliveries and dead letters in process memory, for the dev stack and unit tests; gone
/// when the process ends. One lock over everything makes each call atomic, as a transaction would.
public final class InMemoryNotificationStorage: NotificationStorage {
    private struct Delivery {
        var accountId: String
        var visibleAt: Timestamp
        var attempts = 0
        var claimID: UUID?
        var lastError: String?
    }

    private struct Letter {
        var attempts: Int
        var lastError: String?
        var deadAt: Timestamp
    }

    private struct State {
        /// Position n is at index n - 1.
        var events: [StoredEvent] = []
        var positionByEventId: [UUID: Int64] = [:]
        var groups: [String: [String]?] = [:]
        var deliveries: [String: [Int64: Delivery]] = [:]
        var deadLetters: [String: [Int64: Letter]] = [:]
        var webhookLog: [String: [WebhookAttempt]] = [:]

        func event(at position: Int64) -> AccountEvent { events[Int(position) - 1].event }

        static func matches(_ type: String, _ types: [String]?) -> Bool {
            types.map { $0.contains(type) } ?? true
        }

        /// The delivery under `claim` when that claim is its current one.
        func current(_ claim: DeliveryClaim) -> Delivery? {
            guard let delivery = deliveries[claim.group]?[claim.position], delivery.claimID == claim.claimID else { return nil }
            return delivery
        }

        mutating func bury(_ claim: DeliveryClaim, reason: String?, at now: Timestamp) {
            guard let delivery = deliveries[claim.group]?.removeValue(forKey: claim.position) else { return }
            deadLetters[claim.group, default: [:]][claim.position] = Letter(attempts: delivery.attempts, lastError: reason ?? delivery.lastError, deadAt: now)
        }
    }

    private let state = Mutex(State())

    public init() {}

    public func append(_ events: [AccountEvent], at now: Timestamp) -> AppendOutcome {
        state.withLock { state in
            var outcome = AppendOutcome(stored: 0, duplicates: 0)
            for event in events {
                guard state.positionByEventId[event.id] == nil else {
                    outcome.duplicates += 1
                    continue
                }
                let position = Int64(state.events.count + 1)
                state.events.append(StoredEvent(position: position, event: event))
                state.positionByEventId[event.id] = position
                for (group, types) in state.groups where State.matches(event.kind.name, types) {
                    state.deliveries[group, default: [:]][position] = Delivery(accountId: event.accountId, visibleAt: now)
                }
                outcome.stored += 1
            }
            return outcome
        }
    }

    public func ensureGroup(_ name: String, types: [String]?, at now: Timestamp) -> GroupOutcome {
        state.withLock { state in
            if let existing = state.groups[name] {
                return existing.map(Set.init) == types.map(Set.init) ? .existing : .mismatch
            }
            state.groups[name] = .some(types)
            return .created
        }
    }

    public func groupExists(_ name: String) -> Bool {
        state.withLock { $0.groups[name] != nil }
    }

    public func claim(group: String, limit: Int, at now: Timestamp, visibility: Duration, maxAttempts: Int) -> [ClaimedDelivery] {
        state.withLock { state in
            guard let queued = state.deliveries[group] else { return [] }
            var blocked: Set<String> = []
            var claimed: [ClaimedDelivery] = []
            for position in queued.keys.sorted() {
                guard claimed.count < limit else { break }
                guard var delivery = state.deliveries[group]?[position] else { continue }
                // Any queued delivery holds back the account's later ones, whether it is due or not.
                guard blocked.insert(delivery.accountId).inserted, delivery.visibleAt <= now else { continue }
                if delivery.attempts >= maxAttempts {
                    state.deliveries[group]?[position] = nil
                    let reason = delivery.lastError ?? "not acknowledged after \(delivery.attempts) attempts"
                    state.deadLetters[group, default: [:]][position] = Letter(attempts: delivery.attempts, lastError: reason, deadAt: now)
                    continue
                }
                delivery.attempts += 1
                delivery.visibleAt = now.adding(visibility)
                delivery.claimID = UUID()
                state.deliveries[group]?[position] = delivery
                let claim = DeliveryClaim(group: group, position: position, claimID: delivery.claimID!)
                claimed.append(ClaimedDelivery(claim: claim, event: state.event(at: position), attempts: delivery.attempts))
            }
            return claimed
        }
    }

    public func acknowledge(_ claims: [DeliveryClaim]) -> Int {
        state.withLock { state in
            var count = 0
            for claim in claims where state.current(claim) != nil {
                state.deliveries[claim.group]?[claim.position] = nil
                count += 1
            }
            return count
        }
    }

    public func retry(_ claim: DeliveryClaim, reason: String, retryAt: Timestamp, maxAttempts: Int, at now: Timestamp) -> RetryOutcome {
        state.withLock { state in
            guard var delivery = state.current(claim) else { return .stale }
            if delivery.attempts >= maxAttempts {
                state.bury(claim, reason: reason, at: now)
                return .deadLettered
            }
            delivery.visibleAt = retryAt
            delivery.lastError = reason
            delivery.claimID = nil
            state.deliveries[claim.group]?[claim.position] = delivery
            return .scheduled
        }
    }

    public func reject(_ claim: DeliveryClaim, reason: String, at now: Timestamp) -> Bool {
        state.withLock { state in
            guard state.current(claim) != nil else { return false }
            state.bury(claim, reason: reason, at: now)
            return true
        }
    }

    public func release(_ claim: DeliveryClaim, at now: Timestamp) {
        state.withLock { state in
            guard var delivery = state.current(claim) else { return }
            delivery.visibleAt = now
            delivery.claimID = nil
            state.deliveries[claim.group]?[claim.position] = delivery
        }
    }

    public func nextDue(group: String) -> Timestamp? {
        state.withLock { state in
            state.deliveries[group]?.values.map(\.visibleAt).min()
        }
    }

    public func deadLetters(group: String, limit: Int) -> [DeadLetter] {
        state.withLock { state in
            guard let letters = state.deadLetters[group] else { return [] }
            return letters.keys.sorted().prefix(limit).map { position in
                let letter = letters[position]!
                return DeadLetter(event: state.event(at: position), attempts: letter.attempts, lastError: letter.lastError, deadAt: letter.deadAt)
            }
        }
    }

    public func replayDeadLetters(group: String, eventIds: [UUID]?, at now: Timestamp) -> Int {
        state.withLock { state in
            guard let letters = state.deadLetters[group] else { return 0 }
            let wanted = eventIds.map { Set($0.compactMap { state.positionByEventId[$0] }) }
            var replayed = 0
            for position in letters.keys.sorted() where wanted?.contains(position) ?? true {
                state.deadLetters[group]?[position] = nil
                if state.deliveries[group]?[position] == nil {
                    state.deliveries[group, default: [:]][position] = Delivery(accountId: state.event(at: position).accountId, visibleAt: now)
                }
                replayed += 1
            }
            return replayed
        }
    }

    public func replay(group: String, from: Timestamp, at now: Timestamp) -> Int {
        state.withLock { state in
            guard let types = state.groups[group] else { return 0 }
            var replayed = 0
            for stored in state.events where Timestamp(stored.event.time) >= from && State.matches(stored.event.kind.name, types) {
                guard state.deliveries[group]?[stored.position] == nil else { continue }
                state.deliveries[group, default: [:]][stored.position] = Delivery(accountId: stored.event.accountId, visibleAt: now)
                replayed += 1
            }
            return replayed
        }
    }

    public func accountEvents(accountId: String, after cursor: TailCursor?, limit: Int) -> [TailedEvent] {
        state.withLock { state in
            let start = Int(min(max(cursor?.position ?? 0, 0), Int64(state.events.count)))
            return state.events[start...].lazy
                .filter { $0.event.accountId == accountId }
                .prefix(limit)
                .map { TailedEvent(cursor: TailCursor(transaction: 0, position: $0.position), event: $0.event) }
        }
    }

    public func cursor(ofEvent id: UUID, accountId: String) -> TailCursor? {
        state.withLock { state in
            guard let position = state.positionByEventId[id], state.event(at: position).accountId == accountId else { return nil }
            return TailCursor(transaction: 0, position: position)
        }
    }

    public func tailCursor() -> TailCursor {
        state.withLock { TailCursor(transaction: 0, position: Int64($0.events.count)) }
    }

    public func tail(after cursor: TailCursor, types: [String]?, limit: Int) -> [TailedEvent] {
        state.withLock { state in
            // Positions are given and committed in one step here, so a position is settled as soon as it exists.
            let start = Int(min(max(cursor.position, 0), Int64(state.events.count)))
            return state.events[start...].lazy
                .filter { State.matches($0.event.kind.name, types) }
                .prefix(limit)
                .map { TailedEvent(cursor: TailCursor(transaction: 0, position: $0.position), event: $0.event) }
        }
    }

    public func logWebhookAttempt(_ attempt: WebhookAttempt) {
        state.withLock { state in
            state.webhookLog[attempt.endpoint, default: []].append(attempt)
            // Memory is the dev stack's: keep the latest attempts only.
            if state.webhookLog[attempt.endpoint]!.count > 10_000 {
                state.webhookLog[attempt.endpoint]!.removeFirst(1_000)
            }
        }
    }

    public func webhookAttempts(endpoint: String, limit: Int) -> [WebhookAttempt] {
        state.withLock { Array(($0.webhookLog[endpoint] ?? []).suffix(limit).reversed()) }
    }

    public func checkHealth() {}
}

/// An event with its position, as the memory store keeps them.
struct StoredEvent: Sendable, Equatable {
    /// The store's order: increasing with every stored event.
    var position: Int64
    var event: AccountEvent

    init(position: Int64, event: AccountEvent) {
        self.position = position
        self.event = event
    }
}
