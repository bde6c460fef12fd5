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

    private struct Erasure {
        var requestedAt: Timestamp
        var generation = 0
        var erasedGeneration: Int?
        var erasedAt: Timestamp?
    }

    private struct TailReader {
        /// Events up to this position are acknowledged, or were stored before the reader's tail started.
        var acknowledged: Int64
        var leaseUntil: Timestamp
    }

    private struct State {
        var tailReaders: [UUID: TailReader] = [:]
        /// In position order; erasure and retention remove from anywhere.
        var events: [StoredEvent] = []
        var lastPosition: Int64 = 0
        var positionByEventId: [UUID: Int64] = [:]
        var groups: [String: [String]?] = [:]
        var groupOwners: [String: String] = [:]
        var deliveries: [String: [Int64: Delivery]] = [:]
        var deadLetters: [String: [Int64: Letter]] = [:]
        var webhookLog: [String: [WebhookAttempt]] = [:]
        var webhookEndpoints: [String: StoredWebhookEndpoint] = [:]
        var erasures: [String: Erasure] = [:]

        /// The index of the first event after `position`.
        func start(after position: Int64) -> Int {
            var (low, high) = (0, events.count)
            while low < high {
                let middle = (low + high) / 2
                if events[middle].position <= position { low = middle + 1 } else { high = middle }
            }
            return low
        }

        func event(at position: Int64) -> AccountEvent { events[start(after: position - 1)].event }

        mutating func remove(positions: Set<Int64>) {
            guard !positions.isEmpty else { return }
            for stored in events where positions.contains(stored.position) {
                positionByEventId[stored.event.id] = nil
            }
            events.removeAll { positions.contains($0.position) }
            for group in deliveries.keys { deliveries[group] = deliveries[group]!.filter { !positions.contains($0.key) } }
            for group in deadLetters.keys { deadLetters[group] = deadLetters[group]!.filter { !positions.contains($0.key) } }
        }

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
                state.lastPosition += 1
                let position = state.lastPosition
                state.events.append(StoredEvent(position: position, event: event))
                state.positionByEventId[event.id] = position
                if case .deletingAccount = event.kind {
                    if state.erasures[event.accountId] == nil { state.erasures[event.accountId] = Erasure(requestedAt: now) }
                } else {
                    state.erasures[event.accountId]?.generation += 1
                }
                for (group, types) in state.groups where State.matches(event.kind.name, types) {
                    state.deliveries[group, default: [:]][position] = Delivery(accountId: event.accountId, visibleAt: now)
                }
                outcome.stored += 1
            }
            return outcome
        }
    }

    public func ensureGroup(_ name: String, types: [String]?, owner: String?, at now: Timestamp) -> GroupOutcome {
        state.withLock { state in
            if let existing = state.groups[name] {
                if let current = state.groupOwners[name], current != owner { return .foreign }
                guard existing.map(Set.init) == types.map(Set.init) else { return .mismatch }
                // A group without an owner (declared before groups had owners) becomes the declaring caller's.
                if state.groupOwners[name] == nil { state.groupOwners[name] = owner }
                return .existing
            }
            state.groups[name] = .some(types)
            state.groupOwners[name] = owner
            return .created
        }
    }

    public func groupExists(_ name: String) -> Bool {
        state.withLock { $0.groups[name] != nil }
    }

    public func groupOwner(_ name: String) -> String?? {
        state.withLock { state in state.groups[name] == nil ? nil : .some(state.groupOwners[name]) }
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
            return state.events[state.start(after: cursor?.position ?? 0)...].lazy
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
        state.withLock { TailCursor(transaction: 0, position: $0.lastPosition) }
    }

    public func tail(after cursor: TailCursor, types: [String]?, limit: Int) -> [TailedEvent] {
        state.withLock { state in
            // Positions are given and committed in one step here, so a position is settled as soon as it exists.
            return state.events[state.start(after: cursor.position)...].lazy
                .filter { State.matches($0.event.kind.name, types) }
                .prefix(limit)
                .map { TailedEvent(cursor: TailCursor(transaction: 0, position: $0.position), event: $0.event) }
        }
    }

    public func registerTailReader(_ id: UUID, start: TailCursor, leaseUntil: Timestamp, at now: Timestamp) {
        state.withLock { state in
            state.tailReaders = state.tailReaders.filter { $0.value.leaseUntil > now }
            state.tailReaders[id] = TailReader(acknowledged: start.position, leaseUntil: leaseUntil)
        }
    }

    public func renewTailReader(_ id: UUID, acknowledged: TailCursor?, leaseUntil: Timestamp, at now: Timestamp) -> Bool {
        state.withLock { state in
            guard var reader = state.tailReaders[id], reader.leaseUntil > now else { return false }
            reader.acknowledged = max(reader.acknowledged, acknowledged?.position ?? reader.acknowledged)
            reader.leaseUntil = leaseUntil
            state.tailReaders[id] = reader
            return true
        }
    }

    public func removeTailReader(_ id: UUID) {
        state.withLock { _ = $0.tailReaders.removeValue(forKey: id) }
    }

    public func liveTailReaders(at now: Timestamp) -> [UUID] {
        state.withLock { state in state.tailReaders.filter { $0.value.leaseUntil > now }.map(\.key) }
    }

    public func tailReadersBehind(_ readers: [UUID], eventIds: [UUID], at now: Timestamp) -> Int? {
        state.withLock { state in
            let positions = Set(eventIds).map { state.positionByEventId[$0] }
            guard let last = positions.compactMap({ $0 }).max(), !positions.contains(nil) else { return nil }
            return Set(readers).count { id in
                guard let reader = state.tailReaders[id], reader.leaseUntil > now else { return false }
                return reader.acknowledged < last
            }
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

    public func webhookEndpoints() -> [StoredWebhookEndpoint] {
        state.withLock { $0.webhookEndpoints.values.sorted { $0.name < $1.name } }
    }

    public func addWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, groupOwner: String?, limit: Int, at now: Timestamp) -> WebhookEndpointAddition {
        state.withLock { state in
            guard state.webhookEndpoints[endpoint.name] == nil else { return .nameTaken }
            guard state.webhookEndpoints.count < limit else { return .limitReached }
            state.webhookEndpoints[endpoint.name] = endpoint
            let group = "webhook:\(endpoint.name)"
            state.deliveries[group] = nil
            state.deadLetters[group] = nil
            state.webhookLog[endpoint.name] = nil
            state.groups[group] = .some(endpoint.types.map { Array(Set($0)).sorted() })
            state.groupOwners[group] = groupOwner
            return .added
        }
    }

    public func removeWebhookEndpoint(named name: String) -> Int? {
        state.withLock { state in
            guard state.webhookEndpoints.removeValue(forKey: name) != nil else { return nil }
            let group = "webhook:\(name)"
            let dropped = (state.deliveries[group]?.count ?? 0) + (state.deadLetters[group]?.count ?? 0)
            state.groups[group] = nil
            state.groupOwners[group] = nil
            state.deliveries[group] = nil
            state.deadLetters[group] = nil
            state.webhookLog[name] = nil
            return dropped
        }
    }

    public func eraseDeletedAccounts(graceCutoff: Timestamp, limit: Int, at now: Timestamp) -> Int {
        state.withLock { state in
            let queued = Set(state.deliveries.values.flatMap { $0.values.map(\.accountId) })
            let ready = state.erasures
                .filter { $0.value.erasedGeneration != $0.value.generation && ($0.value.requestedAt < graceCutoff || !queued.contains($0.key)) }
                .sorted { $0.value.requestedAt < $1.value.requestedAt }
                .prefix(limit)
            for (accountId, erasure) in ready {
                let doomed = state.events.filter {
                    guard $0.event.accountId == accountId else { return false }
                    if case .deletingAccount = $0.event.kind { return false }
                    return true
                }
                state.remove(positions: Set(doomed.map(\.position)))
                state.erasures[accountId]?.erasedGeneration = erasure.generation
                state.erasures[accountId]?.erasedAt = now
            }
            return ready.count
        }
    }

    public func prune(before cutoff: Timestamp, limit: Int) -> Int {
        state.withLock { state in
            let held = Set(state.deliveries.values.flatMap(\.keys) + state.deadLetters.values.flatMap(\.keys))
            let old = state.events.lazy.filter { Timestamp($0.event.time) < cutoff && !held.contains($0.position) }.prefix(limit).map(\.position)
            let positions = Set(old)
            state.remove(positions: positions)
            for endpoint in state.webhookLog.keys { state.webhookLog[endpoint]!.removeAll { $0.at < cutoff } }
            state.erasures = state.erasures.filter { _, erasure in
                !(erasure.erasedGeneration == erasure.generation && (erasure.erasedAt.map { $0 < cutoff } ?? false))
            }
            return positions.count
        }
    }

    public func checkHealth() {}

    /// Nothing to watch: only this process stores here, and its store wakes its readers itself. Waits until
    /// cancelled.
    public func watchPublished(_ changed: @escaping @Sendable () -> Void) async throws {
        changed()
        let (never, _) = AsyncStream<Void>.makeStream()
        for await _ in never {}
    }
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
