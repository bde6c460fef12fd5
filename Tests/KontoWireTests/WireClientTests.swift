@testable import KontoWire
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Client pool")
struct WireClientTests {
    @Test("1,000 concurrent pipelined requests over a few connections each get their own response")
    func concurrentPipelined() async throws {
        let server = TestSupport.makeServer { $0.maxInFlightPerConnection = 64 }
        // Answers out of order: later requests may finish first.
        server.registerRaw("test.shuffle") { payload, _ in
            await Task.yield()
            if payload.getInteger(at: payload.readerIndex, as: UInt32.self)! % 3 == 0 { await Task.yield() }
            return payload
        }
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server)) { $0.connectionCount = 3 }
            try await TestSupport.withRunning([client]) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<1_000 {
                        group.addTask {
                            var payload = ByteBuffer()
                            payload.writeInteger(UInt32(index))
                            let answer = try await client.callRaw("test.shuffle", payload: payload, timeout: .seconds(60))
                            #expect(answer.getInteger(at: answer.readerIndex, as: UInt32.self) == UInt32(index))
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test("a typed call from many tasks with typed answers")
    func typedConcurrent() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<100 {
                        group.addTask {
                            let answer = try await client.call(TestSupport.echo, .init(text: "n\(index)", number: index), timeout: .seconds(60))
                            #expect(answer == .init(text: "n\(index)", number: index))
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    @Test("while the service is down, calls fail fast with a retryable error")
    func failFastWhenDown() async throws {
        // Find a port nobody listens on by binding and stopping a server.
        let port: Int = try await {
            let probe = TestSupport.makeServer()
            return try await TestSupport.withRunning([probe]) { try await TestSupport.port(of: probe) }
        }()
        let client = TestSupport.makeClient(port: port) { $0.backoff.maximum = .seconds(1) }
        try await TestSupport.withRunning([client]) {
            // Generous bound: "fast" means an error instead of waiting for the request timeout.
            let error = await #expect(throws: WireError.self) {
                _ = try await TestSupport.within(seconds: 30) {
                    try await client.callRaw("test.raw", payload: ByteBuffer(), timeout: .seconds(3600))
                }
            }
            #expect(error?.code == WireError.Code.serviceUnavailable)
            #expect(error?.isRetryable == true)
        }
    }

    @Test("a server stopped mid-request fails the caller within its timeout; after a restart the same client works again")
    func serverStopAndRestart() async throws {
        let started = AsyncStream.makeStream(of: Void.self)
        let first = TestSupport.makeServer { $0.shutdownGracePeriod = .milliseconds(100) }
        first.registerRaw("test.hang") { _, _ in
            started.continuation.yield()
            try await Task.sleep(for: .seconds(3600))
            return ByteBuffer()
        }
        let firstGroup = ServiceGroup(configuration: .init(services: [.init(service: first)], logger: TestSupport.logger))
        let firstRun = Task { try await firstGroup.run() }
        do {
            let port = try await TestSupport.port(of: first)
            let client = TestSupport.makeClient(port: port) {
                $0.backoff = Backoff(initial: .milliseconds(20), maximum: .milliseconds(200), jitter: .equal)
            }
            try await TestSupport.withRunning([client]) {
                // Warm up, then start a request that will never be answered.
                _ = try await client.call(TestSupport.echo, .init(text: "warm", number: 0), timeout: .seconds(30))
                let hanging = Task { try await client.callRaw("test.hang", payload: ByteBuffer(), timeout: .seconds(30)) }
                for await _ in started.stream { break }
                await firstGroup.triggerGracefulShutdown()
                let start = ContinuousClock.now
                await #expect(throws: WireError.self) { _ = try await hanging.value }
                #expect(ContinuousClock.now - start < .seconds(30))
                // Bounded by the server's 100 ms grace period.
                try await firstRun.value

                // Restart on the same port; the client recovers by itself.
                let second = TestSupport.makeServer(port: port)
                try await TestSupport.withRunning([second]) {
                    _ = try await TestSupport.port(of: second)
                    let answer = try await TestSupport.within(seconds: 60) {
                        while true {
                            do {
                                return try await client.call(TestSupport.echo, .init(text: "back", number: 1), timeout: .seconds(10))
                            } catch let error as WireError where error.isRetryable {
                                // Expected until a pool connection is back; the pool's own backoff paces this.
                                try await Task.sleep(for: .milliseconds(20))
                            }
                        }
                    }
                    #expect(answer.text == "back")
                }
            }
        } catch {
            firstRun.cancel()
            throw error
        }
    }

    @Test("a server that accepts but never finishes the handshake makes calls fail, not hang")
    func handshakeNeverCompletes() async throws {
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = silent.localAddress!.port!
        let client = TestSupport.makeClient(port: port) {
            $0.connectionCount = 1
            $0.connectTimeout = .milliseconds(200)
        }
        try await TestSupport.withRunning([client]) {
            let error = await #expect(throws: WireError.self) {
                _ = try await client.callRaw("test.raw", payload: ByteBuffer(), timeout: .seconds(30))
            }
            #expect(error?.isRetryable == true)
        }
        try await silent.close()
    }

    @Test("a request over the server's frame limit is refused locally; the calls sharing its connection go on")
    func oversizedRequestRefusedLocally() async throws {
        let (server, waiting, release) = TestSupport.makeGatedServer { $0.maxFrameLength = 64 * 1024 }
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server)) { $0.connectionCount = 1 }
            try await TestSupport.withRunning([client]) {
                // A call in flight on the pool's only connection.
                let inFlight = Task { try await client.callRaw("test.gate", payload: ByteBuffer(string: "kept"), timeout: .seconds(60)) }
                for await _ in waiting { break }
                let error = await #expect(throws: WireError.self) {
                    _ = try await client.callRaw("test.raw", payload: ByteBuffer(repeating: 1, count: 64 * 1024), timeout: .seconds(30))
                }
                #expect(error?.code == WireError.Code.frameTooLarge)
                #expect(error?.isRetryable == false)
                release.yield()
                #expect(String(buffer: try await inFlight.value) == "kept")
                let after = try await client.callRaw("test.raw", payload: ByteBuffer(string: "after"), timeout: .seconds(30))
                #expect(String(buffer: after) == "after")
            }
        }
    }

    @Test("headers a server would refuse are refused before anything is sent", arguments: [
        ("", nil, nil),
        (String(repeating: "m", count: WireLimits.maximumNameLength + 1), nil, nil),
        ("test.raw", String(repeating: "r", count: 70_000), nil),
        ("test.raw", nil, String(repeating: "p", count: WireLimits.maximumNameLength + 1)),
    ] as [(String, String?, String?)])
    func invalidHeaders(method: String, requestID: String?, traceParent: String?) async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server)) { $0.connectionCount = 1 }
            try await TestSupport.withRunning([client]) {
                let error = await #expect(throws: WireError.self) {
                    _ = try await client.callRaw(method, payload: ByteBuffer(), timeout: .seconds(30), requestID: requestID, traceParent: traceParent)
                }
                #expect(error?.code == WireError.Code.invalidRequest)
                let answer = try await client.callRaw("test.raw", payload: ByteBuffer(string: "ok"), timeout: .seconds(30))
                #expect(String(buffer: answer) == "ok")
            }
        }
    }

    @Test("a call cancelled before it was queued for a connection ends at once, not at its timeout")
    func cancelledBeforeQueued() async throws {
        let (server, waiting, release) = TestSupport.makeGatedServer { $0.maxInFlightPerConnection = 1 }
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server)) { $0.connectionCount = 1 }
            try await TestSupport.withRunning([client]) {
                // Fill the only slot, so the next call has to wait for one.
                let holder = Task { try await client.callRaw("test.gate", payload: ByteBuffer(), timeout: .seconds(120)) }
                for await _ in waiting { break }
                let cancelled = Task {
                    // Cancelled before it asks: its cancellation handler runs before there is a waiter to remove.
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await client.callRaw("test.raw", payload: ByteBuffer(), timeout: .seconds(120))
                }
                let result = await cancelled.result
                #expect(throws: CancellationError.self) { try result.get() }
                // And one cancelled while it waits for the slot.
                let queued = Task { try await client.callRaw("test.raw", payload: ByteBuffer(), timeout: .seconds(120)) }
                queued.cancel()
                let queuedResult = await queued.result
                #expect(throws: CancellationError.self) { try queuedResult.get() }
                release.yield()
                _ = try await holder.value
            }
        }
    }

    @Test("reconnects back off with equal jitter by default, so reconnecting clients spread out")
    func backoff() {
        let backoff = WireClient.Configuration(port: 1, serviceName: "c", serverName: "s", secret: WireSecret("s")).backoff
        #expect(backoff.jitter == .equal)
        #expect(backoff.initial == .milliseconds(50) && backoff.maximum == .seconds(5))
    }
}
