import KontoWire
import NIOCore
import Synchronization
import Testing

/// Peers that leave with work outstanding, over real sockets (docs/PROTOCOL.md, "Limits and connection rules", "A peer
/// that leaves"): whatever they left behind, the server stops it and holds nothing for them afterwards.
@Suite("Peers that reset")
struct PeerResetTests {
    /// Calls of `test.hold`, which wait until they are cancelled (or, when `stubborn`, until the gate opens, whatever
    /// cancellation says): each start and each cancellation is counted and announced.
    final class HeldCalls: Sendable {
        private struct State {
            var started = 0
            var cancelled = 0
            var open = false
            var gate: [CheckedContinuation<Void, Never>] = []
            var waiters: [UInt64: (condition: @Sendable (Int, Int) -> Bool, continuation: CheckedContinuation<Void, Never>)] = [:]
            var nextWaiter: UInt64 = 0
        }

        private let state = Mutex(State())
        let stubborn: Bool

        init(stubborn: Bool) {
            self.stubborn = stubborn
        }

        var started: Int { self.state.withLock { $0.started } }
        var cancelled: Int { self.state.withLock { $0.cancelled } }

        func register(on server: WireServer, execution: WireServer.HandlerExecution? = nil) {
            server.registerRaw("test.hold", execution: execution) { _, _ in
                await self.hold()
                return ByteBuffer()
            }
        }

        private func hold() async {
            self.update { $0.started += 1 }
            await withTaskCancellationHandler {
                if self.stubborn {
                    await self.waitForGate()
                } else {
                    // A stream of its own that never yields: cancellation ends the iteration. (One shared by the calls
                    // would end for all of them at the first cancellation, before the others are cancelled.)
                    let never = AsyncStream.makeStream(of: Void.self)
                    defer { never.continuation.finish() }
                    for await _ in never.stream {}
                }
            } onCancel: {
                self.update { $0.cancelled += 1 }
            }
        }

        private func waitForGate() async {
            await withCheckedContinuation { continuation in
                let open = self.state.withLock { state in
                    if !state.open { state.gate.append(continuation) }
                    return state.open
                }
                if open { continuation.resume() }
            }
        }

        /// Lets stubborn calls return.
        func openGate() {
            let waiting = self.state.withLock { state in
                state.open = true
                defer { state.gate.removeAll() }
                return state.gate
            }
            waiting.forEach { $0.resume() }
        }

        private func update(_ change: (inout State) -> Void) {
            let ready = self.state.withLock { state in
                change(&state)
                let (started, cancelled) = (state.started, state.cancelled)
                let ready = state.waiters.filter { $0.value.condition(started, cancelled) }
                for id in ready.keys { state.waiters[id] = nil }
                return ready.values.map(\.continuation)
            }
            ready.forEach { $0.resume() }
        }

        /// Returns once `condition(started, cancelled)` holds; fails after 30 s (the wait is cancelled, not left hanging).
        func wait(until condition: @escaping @Sendable (_ started: Int, _ cancelled: Int) -> Bool) async throws {
            try await TestSupport.within(seconds: 30) {
                let id = self.state.withLock { state in
                    state.nextWaiter += 1
                    return state.nextWaiter
                }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let now = self.state.withLock { state in
                            if condition(state.started, state.cancelled) || Task.isCancelled { return true }
                            state.waiters[id] = (condition, continuation)
                            return false
                        }
                        if now { continuation.resume() }
                    }
                } onCancel: {
                    self.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
                }
                try Task.checkCancellation()
            }
        }
    }

    static func requests(_ ids: ClosedRange<Int>, method: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        for id in ids {
            WireFrameCodec.encode(WireFrame(correlationID: UInt64(id), message: .request(.init(method: method, payload: ByteBuffer()))), into: &buffer)
        }
        return buffer
    }

    /// A connection past its handshake that reads nothing more: the server's answers stay in the sockets' buffers.
    static func silentPeer(port: Int) async throws -> RawConnection {
        let peer = try await RawConnection.connect(port: port)
        guard case .welcome = try await peer.handshake()?.message else {
            throw TestSupport.WaitTimedOut()
        }
        try await peer.channel.setOption(.autoRead, value: false).get()
        return peer
    }

    @Test("a peer that resets with requests in flight and more unread: their handlers are cancelled, nothing it left unread starts, and the server holds nothing for it afterwards")
    func resetAtTheInFlightLimit() async throws {
        let maxInFlight = 4
        let total = 20_000
        let calls = HeldCalls(stubborn: false)
        let server = TestSupport.makeServer { $0.maxInFlightPerConnection = maxInFlight }
        calls.register(on: server)
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let peer = try await Self.silentPeer(port: port)
            // More than the sockets' buffers take at once: the write may never finish, so it is not awaited.
            peer.channel.writeAndFlush(Self.requests(1...total, method: "test.hold"), promise: nil)
            try await calls.wait { started, _ in started == maxInFlight }
            // The server stops reading at the in-flight limit: the rest of the requests wait in its socket, unread.
            try await TestSupport.waitUntil { await server.connectionLoads().first?.isReadHeld == true }
            let received = await server.connectionLoads().first?.requestsReceived ?? 0
            #expect(received < total)

            try await peer.reset()
            try await calls.wait { _, cancelled in cancelled == maxInFlight }
            try await TestSupport.waitUntil { server.admittedConnections == 0 }
            #expect(await server.connectionLoads().isEmpty)
            #expect(calls.started == maxInFlight, "the server started requests the peer left unread")
            try await HostileInputTests.expectServing(port: port)
        }
    }

    @Test("a peer that stops reading its answers and resets: nothing it left unread starts once its read is held")
    func resetWhileNotReadingAnswers() async throws {
        let maxInFlight = 64
        let answerSize = 512 * 1024
        let calls = HeldCalls(stubborn: false)
        let server = TestSupport.makeServer { $0.maxInFlightPerConnection = maxInFlight }
        let answer = ByteBuffer(repeating: 0x41, count: answerSize)
        server.registerRaw("test.big") { _, _ in answer }
        // On the event loop, a handler starts inside the read that brings its request: any the server starts for
        // the peer after it reset is counted before the connection closes.
        calls.register(on: server, execution: .eventLoop)
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let peer = try await Self.silentPeer(port: port)
            // 32 MB of answers nobody reads: more than the sockets take, so the server's channel becomes unwritable.
            try await peer.channel.writeAndFlush(Self.requests(1...maxInFlight, method: "test.big"))
            try await TestSupport.waitUntil {
                guard let load = await server.connectionLoads().first else { return false }
                return load.requestsReceived == maxInFlight && load.inFlight == 0 && !load.isWritable
            }
            // A read the server asked for before it saw the channel unwritable may still be pending: one more request
            // takes it, and then the server holds its read, with nothing in flight.
            try await peer.channel.writeAndFlush(Self.requests(maxInFlight + 1...maxInFlight + 1, method: "test.raw"))
            try await TestSupport.waitUntil {
                guard let load = await server.connectionLoads().first else { return false }
                return load.isReadHeld && load.inFlight == 0 && !load.isWritable
            }
            // Requests the server leaves unread while its answers are not drained.
            try await peer.channel.writeAndFlush(Self.requests(maxInFlight + 2...maxInFlight + 101, method: "test.hold"))

            try await peer.reset()
            try await TestSupport.waitUntil { server.admittedConnections == 0 }
            #expect(await server.connectionLoads().isEmpty)
            #expect(calls.started == 0, "the server started \(calls.started) requests of a peer that had left")
            try await HostileInputTests.expectServing(port: port)
        }
    }

    @Test("handlers that ignore cancellation keep the connection of a peer that reset in the connection limit until they return")
    func stubbornHandlersKeepTheirPlace() async throws {
        let maxInFlight = 4
        let calls = HeldCalls(stubborn: true)
        let server = TestSupport.makeServer {
            $0.maxInFlightPerConnection = maxInFlight
            $0.maxConnections = 1
        }
        calls.register(on: server)
        // Whatever fails, the calls return in the end.
        defer { calls.openGate() }
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let peer = try await Self.silentPeer(port: port)
            peer.channel.writeAndFlush(Self.requests(1...1_000, method: "test.hold"), promise: nil)
            try await calls.wait { started, _ in started == maxInFlight }
            try await TestSupport.waitUntil { await server.connectionLoads().first?.isReadHeld == true }

            try await peer.reset()
            try await calls.wait { _, cancelled in cancelled == maxInFlight }
            // Closed (the server no longer lists it), but its handlers still run and hold what they hold.
            try await TestSupport.waitUntil { await server.connectionLoads().isEmpty }
            #expect(server.admittedConnections == 1)
            // So a peer coming back finds the limit reached, and cannot pile up more such handlers.
            let again = try await RawConnection.connect(port: port)
            #expect(try await again.nextFrame() == WireFrame(correlationID: 0, message: .error(.init(WireError.tooManyConnections))))
            await again.close()
            #expect(calls.started == maxInFlight)

            calls.openGate()
            try await TestSupport.waitUntil { server.admittedConnections == 0 }
            try await HostileInputTests.expectServing(port: port)
        }
    }
}
