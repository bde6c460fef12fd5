import KontoRuntime
import KontoWire
import Synchronization

/// What a cache-holding reader's tail has pushed and had acknowledged, as the replica serving the tail sees it: the
/// place up to which every pushed event is acknowledged (what ``NotificationStore`` records for
/// `notifications.tailBarrier`), and how long the oldest unacknowledged one has waited (a reader too slow to
/// acknowledge has its tail ended, so a barrier stops waiting for it).
final class TailReaderProgress: Sendable {
    private struct Pushed {
        var deliveryID: UInt64
        var cursor: TailCursor
        var at: ContinuousClock.Instant
        var acknowledged = false
    }

    private struct State {
        /// In push order; the acknowledged prefix is dropped as it forms.
        var pushed: [Pushed] = []
        var head = 0
        /// Acknowledgements that came before their push was noted (the client can be that quick).
        var early: Set<UInt64> = []
        var acknowledged: TailCursor?
        var recorded: TailCursor?

        mutating func advance() -> Bool {
            var moved = false
            while head < pushed.count, pushed[head].acknowledged {
                acknowledged = pushed[head].cursor
                head += 1
                moved = true
            }
            if head > 256, head * 2 > pushed.count {
                pushed.removeFirst(head)
                head = 0
            }
            return moved
        }
    }

    private let state = Mutex(State())
    /// Rung when the acknowledged place moves.
    let moved = Wakeup()

    func pushed(_ deliveryID: UInt64, cursor: TailCursor, at now: ContinuousClock.Instant) {
        let advanced = state.withLock { state in
            state.pushed.append(Pushed(deliveryID: deliveryID, cursor: cursor, at: now))
            guard state.early.remove(deliveryID) != nil else { return false }
            state.pushed[state.pushed.count - 1].acknowledged = true
            return state.advance()
        }
        if advanced { moved.notify() }
    }

    /// The reader's outcome for a delivery: only `processed` counts (the reader dropped what the event touches).
    func settled(_ outcome: WireDeliveryOutcome) {
        guard case .processed = outcome.disposition else { return }
        let advanced = state.withLock { state in
            guard let index = state.pushed[state.head...].firstIndex(where: { $0.deliveryID == outcome.deliveryID }) else {
                state.early.insert(outcome.deliveryID)
                return false
            }
            state.pushed[index].acknowledged = true
            return state.advance()
        }
        if advanced { moved.notify() }
    }

    /// The acknowledged place, when it moved since it was last ``recorded(_:)``.
    var unrecorded: TailCursor? {
        state.withLock { state in state.acknowledged == state.recorded ? nil : state.acknowledged }
    }

    func recorded(_ cursor: TailCursor) {
        state.withLock { $0.recorded = cursor }
    }

    /// How long the oldest pushed and unacknowledged event has waited; nil when none waits.
    func oldestWait(at now: ContinuousClock.Instant) -> Duration? {
        state.withLock { state in
            state.pushed[state.head...].first { !$0.acknowledged }.map { now - $0.at }
        }
    }
}
