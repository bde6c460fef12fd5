import Foundation
import KontoModel
import Synchronization

/// The ids of the events a storage call's closure made, for an answer that names them (the gateway waits until
/// every cache has read them). A storage that runs the closure again (a transaction retried) keeps the last call's.
final class WrittenEvents: Sendable {
    private let written = Mutex<[UUID]>([])

    /// Passes `events` through, remembering their ids.
    func record(_ events: [AccountEvent]) -> [AccountEvent] {
        written.withLock { $0 = events.map(\.id) }
        return events
    }

    /// What was recorded; nil when nothing was (the answer then names no events).
    var ids: [UUID]? {
        let ids = written.withLock { $0 }
        return ids.isEmpty ? nil : ids
    }
}
