import Foundation
import KontoWire
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing

/// Subscriptions between a real server and real clients over TCP (docs/PROTOCOL.md, "Subscriptions").
@Suite("Wire subscriptions")
struct WireSubscriptionTests {
    struct Start: Codable, Sendable {
        /// Events to push; nil pushes until the subscription ends.
        var count: Int?
        var payloadBytes: Int = 0
    }

    static let events = WireSubscriptionMethod<Start, TestSupport.Echo>("test.events")

    /// What the server's handler saw of one subscription.
    final class Probe: Sendable {
        struct State {
            var pushed: [UInt64] = []
            var outcomes: [WireDeliveryOutcome] = []
            var ended: (error: String?, unacknowledged: [UInt64])?
            var endWaiters: [CheckedContinuation<Void, Never>] = []
            var pushWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        }

        let state = Mutex(State())

        var pushed: [UInt64] { self.state.withLock { $0.pushed } }
        var outcomes: [WireDeliveryOutcome] { self.state.withLock { $0.outcomes } }
        var ended: (error: String?, unacknowledged: [UInt64])? { self.state.withLock { $0.ended } }

        func didPush(_ id: UInt64) {
            let ready = self.state.withLock { state in
                state.pushed.append(id)
                let ready = state.pushWaiters.filter { $0.count <= state.pushed.count }.map(\.continuation)
                state.pushWaiters.removeAll { $0.count <= state.pushed.count }
                return ready
            }
            ready.forEach { $0.resume() }
        }

        func didReceive(_ outcome: WireDeliveryOutcome) {
            self.state.withLock { $0.outcomes.append(outcome) }
        }

        func didEnd(error: (any Error)?) {
            let waiters = self.state.withLock { state in
                let acknowledged = Set(state.outcomes.map(\.deliveryID))
                state.ended = ((error as? WireError)?.code.rawValue ?? error.map { "\(type(of: $0))" }, state.pushed.filter { !acknowledged.contains($0) })
                defer { state.endWaiters.removeAll() }
                return state.endWaiters
            }
            waiters.forEach { $0.resume() }
        }

        /// Returns once the handler has pushed `count` events.
        func waitForPushes(_ count: Int) async throws {
            try await TestSupport.within(seconds: 30) {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { state in
                        if state.pushed.count >= count { return true }
                        state.pushWaiters.append((count, continuation))
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
        }

        /// Returns once the handler has ended.
        func waitForEnd() async throws {
            try await TestSupport.within(seconds: 30) {
                await withCheckedContinuation { continuation in
                    let now = self.state.withLock { state in
                        if state.ended != nil { return true }
                        state.endWaiters.append(continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
        }
    }

    /// Probes by the order subscriptions were opened.
    final class Probes: Sendable {
        private struct State {
            var probes: [Probe] = []
            var waiters: [(index: Int, continuation: CheckedContinuation<Probe, Never>)] = []
        }
        private let state = Mutex(State())

        func make() -> Probe {
            let probe = Probe()
            let ready = self.state.withLock { state in
                state.probes.append(probe)
                let index = state.probes.count - 1
                defer { state.waiters.removeAll { $0.index == index } }
                return state.waiters.filter { $0.index == index }.map(\.continuation)
            }
            ready.forEach { $0.resume(returning: probe) }
            return probe
        }

        /// The probe of the `index`th subscription, once its handler has started.
        func at(_ index: Int) async throws -> Probe {
            try await TestSupport.within(seconds: 30) {
                await withCheckedContinuation { continuation in
                    let probe = self.state.withLock { state -> Probe? in
                        if index < state.probes.count { return state.probes[index] }
                        state.waiters.append((index, continuation))
                        return nil
                    }
                    if let probe { continuation.resume(returning: probe) }
                }
            }
        }

        var count: Int { self.state.withLock { $0.probes.count } }
    }

    /// A server whose `test.events` pushes numbered events while a second task reads the outcomes; the handler
    /// returns once every event it pushed has its outcome.
    static func makeServer(probes: Probes, configure: (inout WireServer.Configuration) -> Void = { _ in }) -> WireServer {
        let server = TestSupport.makeServer(configure: configure)
        server.registerSubscription(events) { start, _, subscriber in
            let probe = probes.make()
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var number = 0
                        while start.count.map({ number < $0 }) ?? true {
                            let text = String(repeating: "e", count: start.payloadBytes)
                            probe.didPush(try await subscriber.push(TestSupport.Echo(text: text, number: number), topic: "test.numbered"))
                            number += 1
                        }
                    }
                    group.addTask {
                        for await outcome in subscriber.outcomes {
                            probe.didReceive(outcome)
                            if let count = start.count, probe.outcomes.count == count { return }
                        }
                        throw CancellationError()
                    }
                    try await group.waitForAll()
                }
                probe.didEnd(error: nil)
            } catch {
                probe.didEnd(error: error)
                throw error
            }
        }
        return server
    }

    @Test("events arrive in order within the credit, every outcome reaches the handler, and the handler's return ends the stream")
    func roundTrip() async throws {
        let probes = Probes()
        let server = Self.makeServer(probes: probes)
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                let subscription = try await client.subscribe(Self.events, Start(count: 40), credit: 4)
                var numbers: [Int] = []
                var expected: [WireDeliveryOutcome] = []
                var held: [WireDelivery<TestSupport.Echo>] = []
                // Acks go out only once the whole credit is held: a server sending one event too many makes the
                // client fail the stream (wire.protocolViolation), one too few leaves this loop waiting for ever.
                for try await delivery in subscription {
                    numbers.append(delivery.event.number)
                    #expect(delivery.topic == "test.numbered")
                    held.append(delivery)
                    guard held.count == 4 else { continue }
                    for delivery in held {
                        let disposition: WireAck.Disposition = switch delivery.event.number % 3 {
                        case 0: .processed
                        case 1: .retry(reason: "later \(delivery.event.number)")
                        default: .reject(reason: "poison \(delivery.event.number)")
                        }
                        expected.append(WireDeliveryOutcome(deliveryID: delivery.deliveryID, disposition: disposition))
                        subscription.acknowledge(delivery, disposition)
                    }
                    held.removeAll()
                }
                #expect(held.isEmpty)
                #expect(numbers == Array(0..<40))
                try await (try await probes.at(0)).waitForEnd()
                #expect((try await probes.at(0)).ended?.error == nil)
                #expect((try await probes.at(0)).outcomes == expected)
                // The connection goes on serving calls.
                #expect(try await client.call(TestSupport.echo, .init(text: "after", number: 1)).text == "after")
            }
        }
    }

    @Test("a subscriber that never acks gets exactly its credit while another keeps receiving")
    func neverAcks() async throws {
        let probes = Probes()
        let server = Self.makeServer(probes: probes)
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let stuck = TestSupport.makeClient(port: port) { $0.connectionCount = 1 }
            let busy = TestSupport.makeClient(port: port) { $0.connectionCount = 1 }
            try await TestSupport.withRunning([stuck, busy]) {
                let silent = try await stuck.subscribe(Self.events, Start(count: nil), credit: 3)
                var received = 0
                for try await _ in silent {
                    received += 1
                    if received == 3 { break }
                }
                let other = try await busy.subscribe(Self.events, Start(count: 200), credit: 8)
                var count = 0
                for try await delivery in other {
                    other.acknowledge(delivery)
                    count += 1
                }
                #expect(count == 200)
                // The silent subscriber's handler is still waiting for credit after its first three.
                #expect((try await probes.at(0)).pushed.count == 3)
                #expect((try await probes.at(0)).outcomes.isEmpty)
                #expect((try await probes.at(0)).ended == nil)
                silent.cancel()
                try await (try await probes.at(0)).waitForEnd()
                #expect((try await probes.at(0)).ended?.unacknowledged.count == 3)
            }
        }
    }

    @Test("cancelling stops the handler, which learns which deliveries were never acknowledged")
    func cancel() async throws {
        let probes = Probes()
        let server = Self.makeServer(probes: probes)
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                let subscription = try await client.subscribe(Self.events, Start(count: nil), credit: 2)
                var acked: UInt64?
                for try await delivery in subscription {
                    if acked == nil {
                        subscription.acknowledge(delivery)
                        acked = delivery.deliveryID
                    } else {
                        break
                    }
                }
                try await (try await probes.at(0)).waitForPushes(3)
                subscription.cancel()
                try await (try await probes.at(0)).waitForEnd()
                let ended = try #require((try await probes.at(0)).ended)
                // Every pushed delivery but the acknowledged one is released for redelivery.
                #expect(ended.unacknowledged == (try await probes.at(0)).pushed.filter { $0 != acked })
                #expect(try await client.call(TestSupport.echo, .init(text: "still", number: 2)).text == "still")
            }
        }
    }

    @Test("a closed connection ends the handler with what was not acknowledged")
    func connectionLost() async throws {
        let probes = Probes()
        let server = Self.makeServer(probes: probes)
        try await TestSupport.withRunning([server]) {
            let connection = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            _ = try await connection.handshake()
            let start = try WirePayloadCodecTestHelper.json(Start(count: nil))
            try await connection.send(WireFrame(correlationID: 1, message: .request(.init(method: "test.events", credit: 2, payload: start))))
            let first = try #require(try await connection.nextFrame())
            let second = try #require(try await connection.nextFrame())
            #expect(first.kind == .event && second.kind == .event)
            try await connection.send(WireFrame(correlationID: first.correlationID, message: .ack(.init())))
            try await (try await probes.at(0)).waitForPushes(3)
            await connection.close()
            try await (try await probes.at(0)).waitForEnd()
            #expect((try await probes.at(0)).ended?.unacknowledged == (try await probes.at(0)).pushed.filter { $0 != first.correlationID })
        }
    }

    @Test("acks for unknown or repeated ids give no credit and never reach the handler")
    func hostileAcks() async throws {
        let probes = Probes()
        let server = Self.makeServer(probes: probes)
        try await TestSupport.withRunning([server]) {
            let connection = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            _ = try await connection.handshake()
            let start = try WirePayloadCodecTestHelper.json(Start(count: nil))
            try await connection.send(WireFrame(correlationID: 1, message: .request(.init(method: "test.events", credit: 1, payload: start))))
            let first = try #require(try await connection.nextFrame())
            #expect(first.correlationID == 1 && first.kind == .event)
            for id: UInt64 in [0, 2, 1_000, .max] {
                try await connection.send(WireFrame(correlationID: id, message: .ack(.init(.retry(reason: "forged")))))
            }
            // Frames are handled in order: the pong means every forged ack was seen.
            try await connection.send(WireFrame(correlationID: 9, message: .ping(.init())))
            #expect(try await connection.nextFrame() == WireFrame(correlationID: 9, message: .pong(.init())))
            #expect((try await probes.at(0)).pushed == [1])
            try await connection.send(WireFrame(correlationID: 1, message: .ack(.init())))
            try await connection.send(WireFrame(correlationID: 1, message: .ack(.init())))
            let second = try #require(try await connection.nextFrame())
            #expect(second.correlationID == 2 && second.kind == .event)
            try await (try await probes.at(0)).waitForPushes(2)
            #expect((try await probes.at(0)).outcomes == [WireDeliveryOutcome(deliveryID: 1, disposition: .processed)])
            await connection.close()
        }
    }

    @Test("a subscriber that stops reading holds a bounded number of events while another keeps receiving")
    func stopsReading() async throws {
        let probes = Probes()
        let server = Self.makeServer(probes: probes)
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let greedy = try await RawConnection.connect(port: port)
            _ = try await greedy.handshake()
            try await greedy.channel.setOption(.autoRead, value: false).get()
            let start = try WirePayloadCodecTestHelper.json(Start(count: nil, payloadBytes: 32 * 1024))
            // Asks for far more credit than the server grants (1,024): neither may be what bounds the memory.
            try await greedy.send(WireFrame(correlationID: 1, message: .request(.init(method: "test.events", credit: .max, payload: start))))
            try await (try await probes.at(0)).waitForPushes(1)
            let client = TestSupport.makeClient(port: port)
            try await TestSupport.withRunning([client]) {
                let other = try await client.subscribe(Self.events, Start(count: 500, payloadBytes: 1024), credit: 16)
                var count = 0
                for try await delivery in other {
                    other.acknowledge(delivery)
                    count += 1
                }
                #expect(count == 500)
            }
            // Give the stuck handler time to push everything it would be allowed to.
            try await Task.sleep(for: .seconds(1))
            let pushed = (try await probes.at(0)).pushed.count
            // 1,024 credits × 32 KiB would be 32 MiB; the channel's writability stops it at what the kernel buffers.
            #expect(pushed < 512, "the server kept writing to a peer that reads nothing: \(pushed) events")
            try await HostileInputTests.expectServing(port: port)
            await greedy.close()
        }
    }

    @Test("graceful shutdown ends an open subscription with the retryable wire.shuttingDown")
    func shutdown() async throws {
        let probes = Probes()
        let server = Self.makeServer(probes: probes)
        let group = ServiceGroup(configuration: .init(services: [.init(service: server)], logger: TestSupport.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                let subscription = try await client.subscribe(Self.events, Start(count: nil), credit: 2)
                var iterator = subscription.makeAsyncIterator()
                let first = try #require(try await iterator.next())
                subscription.acknowledge(first)
                await group.triggerGracefulShutdown()
                do {
                    while try await iterator.next() != nil {}
                    Issue.record("the subscription ended without an error")
                } catch {
                    #expect((error as? WireError)?.code == WireError.Code.shuttingDown)
                    #expect((error as? WireError)?.isRetryable == true)
                }
            }
            try await tasks.waitForAll()
        }
        #expect((try await probes.at(0)).ended != nil)
    }

    @Test("a subscription method without credit, or credit on a plain method, is refused; the client refuses credit 0")
    func creditRules() async throws {
        let probes = Probes()
        let server = Self.makeServer(probes: probes)
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let connection = try await RawConnection.connect(port: port)
            _ = try await connection.handshake()
            let start = try WirePayloadCodecTestHelper.json(Start(count: 1))
            try await connection.send(WireFrame(correlationID: 1, message: .request(.init(method: "test.events", payload: start))))
            let refused = try #require(try await connection.nextFrame())
            guard case .error(let body) = refused.message else {
                Issue.record("expected an error, got \(refused)")
                return
            }
            #expect(refused.correlationID == 1 && body.code == WireError.Code.protocolViolation)
            try await connection.send(WireFrame(correlationID: 2, message: .request(.init(method: "test.raw", credit: 1, payload: ByteBuffer(string: "x")))))
            let plain = try #require(try await connection.nextFrame())
            guard case .error(let plainBody) = plain.message else {
                Issue.record("expected an error, got \(plain)")
                return
            }
            #expect(plain.correlationID == 2 && plainBody.code == WireError.Code.protocolViolation)
            await connection.close()
            #expect(probes.count == 0)
            let client = TestSupport.makeClient(port: port)
            try await TestSupport.withRunning([client]) {
                await #expect {
                    _ = try await client.subscribe(Self.events, Start(count: 1), credit: 0)
                } throws: { ($0 as? WireError)?.code == WireError.Code.invalidRequest }
            }
        }
    }
}

enum WirePayloadCodecTestHelper {
    static func json<T: Encodable>(_ value: T) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONEncoder().encode(value))
    }
}
