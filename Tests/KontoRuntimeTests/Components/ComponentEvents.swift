import ServiceLifecycle
import Synchronization
import Testing

/// What the test components did, in order.
final class ComponentEvents: Sendable {
    private let events = Mutex<[String]>([])

    func record(_ event: String) {
        self.events.withLock { $0.append(event) }
    }

    var all: [String] { self.events.withLock { $0 } }

    func contains(_ event: String) -> Bool { self.all.contains(event) }

    /// The events from `first` on.
    func since(_ first: String) -> [String] {
        let all = self.all
        guard let start = all.firstIndex(of: first) else { return [] }
        return Array(all[start...])
    }

    func index(of event: String) -> Int? { self.all.firstIndex(of: event) }

    /// Polls until `event` has happened; fails the test after `seconds`.
    func waitFor(_ event: String, seconds: Int = 10) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !self.contains(event) {
            guard ContinuousClock.now < deadline else {
                Issue.record("\(event) did not happen; events: \(self.all)")
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}

/// Opened once by the test; components wait for it.
final class TestGate: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (self.stream, self.continuation) = AsyncStream.makeStream(of: Void.self)
    }

    func open() { self.continuation.finish() }

    /// Returns once open (or cancelled). One waiter per gate.
    func wait() async {
        for await _ in self.stream {}
    }
}

/// Records when it starts, when it is asked to stop and when it has stopped; stopping waits for `stopGate`.
struct RecordingService: Service {
    let name: String
    let events: ComponentEvents
    var stopGate: TestGate?
    /// Returns right after starting, as a part that failed quietly would.
    var returnsAtOnce = false

    func run() async throws {
        self.events.record("\(self.name) started")
        if self.returnsAtOnce { return }
        try? await gracefulShutdown()
        self.events.record("\(self.name) stopping")
        await self.stopGate?.wait()
        self.events.record("\(self.name) stopped")
    }
}

struct SetupFailure: Error, Equatable {}
