import Foundation
import KontoContracts
import KontoEvents
import KontoModel
import KontoTestSupport
import KontoWire
import NotificationService
import Synchronization
import Testing

/// A drain that never returns (a statement stuck on a connection PostgreSQL's restart left behind) must not stop
/// the relay: it is abandoned after the drain timeout and the next one publishes.
@Suite("Outbox relay: a stuck drain", .timeLimit(.minutes(1)))
struct OutboxRelayStuckDrainTests {
    /// An outbox in memory whose first drain hangs until released.
    final class StuckOnceOutbox: OutboxStore, Sendable {
        private struct State {
            var events: [AccountEvent]
            var stuck: CheckedContinuation<Void, Never>?
            var drains = 0
        }

        private let state: Mutex<State>

        init(events: [AccountEvent]) {
            state = Mutex(State(events: events))
        }

        var drains: Int { state.withLock { $0.drains } }

        func drainOutbox(limit: Int, publish: @Sendable ([AccountEvent]) async throws -> Void) async throws -> Int {
            let first = state.withLock { state in
                state.drains += 1
                return state.drains == 1
            }
            if first {
                // Deaf to cancellation, as a statement on a half-dead connection is.
                await withCheckedContinuation { continuation in state.withLock { $0.stuck = continuation } }
            }
            let batch = state.withLock { Array($0.events.prefix(limit)) }
            guard !batch.isEmpty else { return 0 }
            try await publish(batch)
            // By id, as the real outbox deletes its rows: the abandoned first drain, released at the end, may publish
            // a batch a later drain has already removed.
            let published = Set(batch.map(\.id))
            state.withLock { $0.events.removeAll { published.contains($0.id) } }
            return batch.count
        }

        func watchOutbox(_ changed: @escaping @Sendable () -> Void) async throws {
            try await Task.sleep(for: .seconds(3_600))
        }

        func release() {
            state.withLock { state in
                defer { state.stuck = nil }
                return state.stuck
            }?.resume()
        }
    }

    @Test("the stuck drain is abandoned after the drain timeout and the events are published by the next one")
    func stuckDrainIsAbandoned() async throws {
        let events = [
            AccountEvent(accountId: "stuck-1", kind: .passwordChanged),
            AccountEvent(accountId: "stuck-1", kind: .sessionsRevoked),
        ]
        let outbox = StuckOnceOutbox(events: events)
        let notificationsPort = try FreePort.loopback()
        let notifications = try OutboxRelayTests.notificationsServer(port: notificationsPort, database: nil)
        let relayClient = IdentityServiceHarness.client(port: notificationsPort, as: IdentityContract.serviceName, at: NotificationsContract.serviceName)
        let reader = IdentityServiceHarness.client(port: notificationsPort, as: WireAllowList.gateway, at: NotificationsContract.serviceName)
        var configuration = OutboxRelay.Configuration()
        configuration.drainTimeout = .milliseconds(300)
        configuration.pollInterval = .milliseconds(50)
        configuration.backoff.initial = .milliseconds(50)
        let relay = OutboxRelay(store: outbox, notifications: relayClient, configuration: configuration, logger: IdentityServiceHarness.logger)
        try await RunningServices.with([notifications], logger: IdentityServiceHarness.logger) {
            // Listening before the clients start: a first connection refused would have the reader's calls fail fast
            // (wire.serviceUnavailable) while it backs off, as happened on a loaded machine.
            _ = try await notifications.localAddress()
            try await RunningServices.with([relayClient, reader, relay], logger: IdentityServiceHarness.logger) {
                let stored = try await OutboxRelayTests.feed(reader, accountId: "stuck-1", count: 2)
                #expect(stored.map(\.id) == events.map(\.id))
                #expect(outbox.drains >= 2, "published by a drain after the stuck one")
            }
        }
        outbox.release()
    }
}
