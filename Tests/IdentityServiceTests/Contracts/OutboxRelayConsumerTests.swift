import Foundation
import KontoContracts
import KontoEvents
import KontoModel
import KontoTestSupport
import KontoWire
import NIOCore
import Synchronization
import Testing

/// The outbox relay (Identity's and Profile's) as a consumer of the Notifications contract: given the events of a
/// recorded publish in its outbox, it sends exactly the recorded request, and reads the recorded answer: a success
/// empties the outbox, a recorded error keeps the events for the next attempt.
@Suite("Outbox relay, consumer side of the Notifications contract", .timeLimit(.minutes(2)))
struct OutboxRelayConsumerTests {
    /// An outbox holding given events; says what became of each drain.
    final class RecordedOutbox: OutboxStore {
        enum Drain: Sendable, Equatable { case published, kept }

        private let pending: Mutex<[AccountEvent]>
        let drains: AsyncStream<Drain>
        private let drained: AsyncStream<Drain>.Continuation

        init(_ events: [AccountEvent]) {
            pending = Mutex(events)
            (drains, drained) = AsyncStream<Drain>.makeStream()
        }

        var events: [AccountEvent] { pending.withLock { $0 } }

        func drainOutbox(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int {
            let batch = pending.withLock { Array($0.prefix(limit)) }
            guard !batch.isEmpty else { return 0 }
            do {
                try await publish(batch)
            } catch {
                drained.yield(.kept)
                throw error
            }
            pending.withLock { $0.removeFirst(batch.count) }
            drained.yield(.published)
            return batch.count
        }

        func watchOutbox(_ changed: @escaping @Sendable () -> Void) async throws {
            // Nothing is added during a test: nothing to say until cancelled (which ends the stream's iteration).
            let (never, keep) = AsyncStream<Void>.makeStream()
            for await _ in never {}
            keep.finish()
        }
    }

    @Test("every recorded publish a relay can make: the recorded request sent, the recorded answer understood")
    func replay() async throws {
        let examples = try ContractExample.samples(of: ContractExample.load(service: NotificationsContract.serviceName, contractVersion: NotificationsContract.version))
            .filter { $0.method == NotificationsContract.publish.name }
        var checked = 0
        for example in examples {
            let request = try JSONDecoder().decode(NotificationsPublishRequest.self, from: Data(example.request.utf8))
            // A relay publishes at most a batch (at most what Notifications accepts): the over-long publish is the
            // provider's to refuse.
            guard request.events.count <= NotificationsContract.maximumPublishBatch else { continue }
            let outbox = RecordedOutbox(request.events)
            let received = try await Self.relay(outbox, answering: example)
            #expect(received.first == example.request, "\(example.label): sent \(received.first ?? "nothing")")
            #expect(Set(received).count == 1, "\(example.label): every attempt sends the same request")
            if example.error == nil {
                #expect(outbox.events.isEmpty, "\(example.label)")
            } else {
                #expect(outbox.events == request.events, "\(example.label): the events stay in the outbox")
            }
            checked += 1
        }
        // The successes and the recorded storage errors.
        #expect(checked >= 6)
    }

    /// Runs a relay over `outbox` against a stand-in Notifications that answers `example`'s recorded answer, until
    /// its first drain has ended; the requests the stand-in received.
    static func relay(_ outbox: RecordedOutbox, answering example: ContractExample) async throws -> [String] {
        let received = Mutex<[String]>([])
        let server = WireServer(
            configuration: WireServer.Configuration(port: 0, serverName: NotificationsContract.serviceName, secret: WireSecret(IdentityServiceHarness.secret)),
            logger: IdentityServiceHarness.logger
        )
        server.registerRaw(NotificationsContract.publish.name) { payload, _ in
            received.withLock { $0.append((try? ContractExample.canonical(json: payload.readableBytesView)) ?? "unreadable") }
            if let error = example.error {
                throw WireError(code: error.code, message: "recorded", isRetryable: error.retryable, details: error.details.map { Array($0.utf8) } ?? [])
            }
            return ByteBuffer(string: example.response ?? "{}")
        }
        try await RunningServices.with([server], logger: IdentityServiceHarness.logger) {
            let client = IdentityServiceHarness.client(port: try await server.localAddress().port!, as: IdentityContract.serviceName, at: NotificationsContract.serviceName)
            let relay = OutboxRelay(store: outbox, notifications: client, logger: IdentityServiceHarness.logger)
            try await RunningServices.with([client, relay], logger: IdentityServiceHarness.logger) {
                for await _ in outbox.drains { break }
            }
        }
        return received.withLock { $0 }
    }
}
