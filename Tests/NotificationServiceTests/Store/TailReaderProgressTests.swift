import KontoRuntime
import KontoWire
@testable import NotificationService
import Testing

/// The replica-side record of a cache-holding reader's tail: the place it has acknowledged everything up to, and how
/// long its oldest unacknowledged event has waited.
@Suite("Tail reader progress")
struct TailReaderProgressTests {
    static let t0 = ContinuousClock.now

    static func cursor(_ position: Int64) -> TailCursor { TailCursor(transaction: 7, position: position) }
    static func processed(_ id: UInt64) -> WireDeliveryOutcome { WireDeliveryOutcome(deliveryID: id, disposition: .processed) }

    @Test("the acknowledged place is the end of the acknowledged prefix, and is reported once until recorded")
    func prefix() {
        let progress = TailReaderProgress()
        #expect(progress.unrecorded == nil)
        for id in UInt64(1)...3 { progress.pushed(id, cursor: Self.cursor(Int64(id) * 10), at: Self.t0) }
        // The second acknowledged before the first: nothing is acknowledged in order yet.
        progress.settled(Self.processed(2))
        #expect(progress.unrecorded == nil)
        progress.settled(Self.processed(1))
        #expect(progress.unrecorded == Self.cursor(20))
        progress.recorded(Self.cursor(20))
        #expect(progress.unrecorded == nil)
        progress.settled(Self.processed(3))
        #expect(progress.unrecorded == Self.cursor(30))
    }

    @Test("an acknowledgement that arrives before its push was noted still counts")
    func earlyAcknowledgement() {
        let progress = TailReaderProgress()
        progress.settled(Self.processed(1))
        #expect(progress.unrecorded == nil)
        progress.pushed(1, cursor: Self.cursor(5), at: Self.t0)
        #expect(progress.unrecorded == Self.cursor(5))
        #expect(progress.oldestWait(at: Self.t0 + .seconds(9)) == nil)
    }

    @Test("only a processed outcome acknowledges: retry and reject leave the reader behind, and its wait grows")
    func onlyProcessed() {
        let progress = TailReaderProgress()
        progress.pushed(1, cursor: Self.cursor(1), at: Self.t0)
        progress.pushed(2, cursor: Self.cursor(2), at: Self.t0 + .milliseconds(500))
        progress.settled(WireDeliveryOutcome(deliveryID: 1, disposition: .retry(reason: "later")))
        progress.settled(WireDeliveryOutcome(deliveryID: 2, disposition: .reject(reason: "no")))
        #expect(progress.unrecorded == nil)
        #expect(progress.oldestWait(at: Self.t0 + .seconds(2)) == .seconds(2))
        progress.settled(Self.processed(1))
        #expect(progress.unrecorded == Self.cursor(1))
        #expect(progress.oldestWait(at: Self.t0 + .seconds(2)) == .milliseconds(1_500))
        progress.settled(Self.processed(2))
        #expect(progress.oldestWait(at: Self.t0 + .seconds(2)) == nil)
    }

    @Test("a long tail's acknowledged prefix is dropped as it grows: thousands of events, the place still right")
    func longTail() {
        let progress = TailReaderProgress()
        for id in UInt64(1)...5_000 {
            progress.pushed(id, cursor: Self.cursor(Int64(id)), at: Self.t0)
            progress.settled(Self.processed(id))
        }
        #expect(progress.unrecorded == Self.cursor(5_000))
        #expect(progress.oldestWait(at: Self.t0) == nil)
        progress.pushed(5_001, cursor: Self.cursor(5_001), at: Self.t0)
        #expect(progress.oldestWait(at: Self.t0 + .seconds(1)) == .seconds(1))
    }

    @Test("the place moving rings the wakeup; an out-of-order acknowledgement does not")
    func wakeup() {
        let progress = TailReaderProgress()
        let start = progress.moved.generation
        progress.pushed(1, cursor: Self.cursor(1), at: Self.t0)
        progress.pushed(2, cursor: Self.cursor(2), at: Self.t0)
        progress.settled(Self.processed(2))
        #expect(progress.moved.generation == start)
        progress.settled(Self.processed(1))
        #expect(progress.moved.generation == start + 1)
    }
}
