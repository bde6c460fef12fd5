import KontoModel
import Synchronization

/// A clock tests move by hand, to expire sessions, privileges, tokens and throttles without waiting.
final class TestClock: Sendable {
    private let current: Mutex<Timestamp>

    init(_ start: Timestamp = Timestamp(milliseconds: 1_800_000_000_000)) {
        current = Mutex(start)
    }

    var now: Timestamp { current.withLock { $0 } }

    func advance(by duration: Duration) {
        current.withLock { $0 = Timestamp(milliseconds: $0.milliseconds + duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000) }
    }

    var function: @Sendable () -> Timestamp { { self.now } }
}
