import KontoWire
import Synchronization

/// The claims a subscription has pushed and not yet settled, by wire delivery id.
///
/// A client may ack a delivery before the pushing task has recorded its id (the ack races the push's return), so an
/// outcome for an id not recorded yet is kept until the record arrives, and then handed to the recorder.
final class DeliveryLedger: Sendable {
    private struct State {
        var pushed: [UInt64: ClaimedDelivery] = [:]
        var early: [UInt64: WireAck.Disposition] = [:]
    }

    private let state = Mutex(State())

    /// Deliveries pushed and not settled: the subscription's used credit.
    var outstanding: Int { state.withLock { $0.pushed.count + $0.early.count } }

    /// Records a pushed delivery; returns its outcome if it arrived first (the caller settles it).
    func record(_ deliveryID: UInt64, _ delivery: ClaimedDelivery) -> WireAck.Disposition? {
        state.withLock { state in
            if let disposition = state.early.removeValue(forKey: deliveryID) {
                return disposition
            }
            state.pushed[deliveryID] = delivery
            return nil
        }
    }

    /// The delivery an outcome settles; nil when its push has not been recorded yet (kept for `record`).
    func settle(_ outcome: WireDeliveryOutcome) -> ClaimedDelivery? {
        state.withLock { state in
            if let delivery = state.pushed.removeValue(forKey: outcome.deliveryID) {
                return delivery
            }
            state.early[outcome.deliveryID] = outcome.disposition
            return nil
        }
    }

    /// Everything pushed and not settled, removed: released when the subscription ends.
    func drain() -> [ClaimedDelivery] {
        state.withLock { state in
            defer { state.pushed.removeAll() }
            return Array(state.pushed.values)
        }
    }
}
