@testable import KontoWire
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

@Suite("Server and client")
struct WireServerTests {
    @Test("a typed call round-trips through handshake, server and client")
    func typedCall() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let client = TestSupport.makeClient(port: port)
            try await TestSupport.withRunning([client]) {
                let answer = try await client.call(TestSupport.echo, .init(text: "hällo", number: 42))
                #expect(answer == .init(text: "hällo", number: 42))
                let raw = try await client.callRaw("test.raw", payload: ByteBuffer(string: "abc"))
                #expect(String(buffer: raw) == "abc")
            }
        }
    }

    @Test("handlerExecution .eventLoop runs handlers on the connection's event loop")
    func eventLoopExecution() async throws {
        #expect(try await Self.whereHandlersRun { $0.handlerExecution = .eventLoop } == "event loop")
    }

    @Test(
        "on the event loop, handlers that finish at once are answered in order and a waiting one is cancelled when its connection closes",
        .timeLimit(.minutes(1))
    )
    func eventLoopHandlersStartImmediately() async throws {
        let server = TestSupport.makeServer { $0.handlerExecution = .eventLoop }
        let release = AsyncStream.makeStream(of: Void.self)
        let cancelled = AsyncStream.makeStream(of: Void.self)
        server.registerRaw("test.wait") { _, _ in
            await withTaskCancellationHandler {
                for await _ in release.stream { break }
            } onCancel: {
                cancelled.continuation.yield()
            }
            return ByteBuffer()
        }
        try await TestSupport.withRunning([server]) {
            let connection = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            _ = try await connection.handshake()
            try await connection.send(WireFrame(correlationID: 1, message: .request(.init(method: "test.wait", payload: ByteBuffer()))))
            // These answer inside the read that brought them, before their tasks are registered.
            for id in UInt64(2)...21 {
                try await connection.send(WireFrame(correlationID: id, message: .request(.init(method: "test.raw", payload: ByteBuffer(string: "\(id)")))))
            }
            for id in UInt64(2)...21 {
                let answer = try await connection.nextFrame()
                #expect(answer == WireFrame(correlationID: id, message: .response(.init(payload: ByteBuffer(string: "\(id)")))))
            }
            await connection.close()
            // The waiting handler was registered, so closing the connection cancels it.
            for await _ in cancelled.stream { break }
        }
    }

    @Test("by default handlers run off the event loop")
    func globalExecution() async throws {
        #expect(try await Self.whereHandlersRun { _ in } == "elsewhere")
    }

    @Test("a method registered with its own execution runs there, whatever the server's default")
    func perMethodExecution() async throws {
        for (serverDefault, methodChoice, expected) in [
            (WireServer.HandlerExecution.globalExecutor, WireServer.HandlerExecution.eventLoop, "event loop"),
            (.eventLoop, .globalExecutor, "elsewhere"),
        ] {
            let server = TestSupport.makeServer { $0.handlerExecution = serverDefault }
            server.registerRaw("test.where", execution: methodChoice) { _, _ in
                ByteBuffer(string: MultiThreadedEventLoopGroup.currentEventLoop == nil ? "elsewhere" : "event loop")
            }
            let answer = try await TestSupport.withRunning([server]) {
                let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
                return try await TestSupport.withRunning([client]) {
                    String(buffer: try await client.callRaw("test.where", payload: ByteBuffer()))
                }
            }
            #expect(answer == expected)
        }
    }

    /// Where a handler of a server configured by `configure` finds itself running.
    static func whereHandlersRun(_ configure: (inout WireServer.Configuration) -> Void) async throws -> String {
        let server = TestSupport.makeServer(configure: configure)
        server.registerRaw("test.where") { _, _ in
            ByteBuffer(string: MultiThreadedEventLoopGroup.currentEventLoop == nil ? "elsewhere" : "event loop")
        }
        return try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            return try await TestSupport.withRunning([client]) {
                String(buffer: try await client.callRaw("test.where", payload: ByteBuffer()))
            }
        }
    }

    @Test("the welcome lists the served methods and limits")
    func welcome() async throws {
        let server = TestSupport.makeServer { $0.maxInFlightPerConnection = 7 }
        try await TestSupport.withRunning([server]) {
            let connection = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            let answer = try await connection.handshake()
            guard case .welcome(let welcome) = answer?.message else {
                Issue.record("expected welcome, got \(String(describing: answer))")
                return
            }
            #expect(welcome.version == WireProtocolVersion.current)
            #expect(welcome.serverName == "test-server")
            #expect(welcome.methods == ["test.echo", "test.fail", "test.raw"])
            #expect(welcome.maxInFlight == 7)
            await connection.close()
        }
    }

    @Test("an application error reaches the caller with its code")
    func applicationError() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                await #expect {
                    _ = try await client.call(TestSupport.fail, .init(text: "", number: 0))
                } throws: { error in
                    let error = error as? WireError
                    return error?.code == .credentialsTaken && error?.isRetryable == false
                        && error?.message == "user id already taken"
                        && error?.details == Array(#"{"fields":[{"key":"userId"}]}"#.utf8)
                }
            }
        }
    }

    @Test("an unknown method is answered with wire.unknownMethod and the connection stays usable")
    func unknownMethod() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                await #expect {
                    _ = try await client.callRaw("nope", payload: ByteBuffer())
                } throws: { ($0 as? WireError)?.code == WireError.Code.unknownMethod }
                let answer = try await client.call(TestSupport.echo, .init(text: "still", number: 1))
                #expect(answer.text == "still")
            }
        }
    }

    @Test("a payload that is not the method's request type is wire.badPayload")
    func badPayload() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                await #expect {
                    _ = try await client.callRaw("test.echo", payload: ByteBuffer(string: "not json"))
                } throws: { ($0 as? WireError)?.code == WireError.Code.badPayload }
            }
        }
    }

    @Test("an untyped handler error becomes wire.internalError without details")
    func internalError() async throws {
        struct Secretive: Error {}
        let server = TestSupport.makeServer()
        server.registerRaw("test.throws") { _, _ in throw Secretive() }
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                await #expect {
                    _ = try await client.callRaw("test.throws", payload: ByteBuffer())
                } throws: { error in
                    let error = error as? WireError
                    return error?.code == WireError.Code.internalError && error?.message.contains("Secretive") == false
                }
            }
        }
    }

    @Test("the server answers wire.deadlineExceeded when a handler outlives the caller's deadline")
    func deadlineHonoured() async throws {
        let server = TestSupport.makeServer()
        let release = AsyncStream.makeStream(of: Void.self)
        server.registerRaw("test.slow") { _, _ in
            for await _ in release.stream { break }
            return ByteBuffer()
        }
        try await TestSupport.withRunning([server]) {
            let connection = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            _ = try await connection.handshake()
            try await connection.send(WireFrame(correlationID: 5, message: .request(.init(
                method: "test.slow",
                timeoutMilliseconds: 50,
                payload: ByteBuffer()
            ))))
            let answer = try await connection.nextFrame()
            #expect(answer?.correlationID == 5)
            #expect(answer?.message == .error(.init(WireError.deadlineExceeded)))
            // The handler finishing later must not produce a second answer; a ping proves order.
            release.continuation.finish()
            try await connection.send(WireFrame(correlationID: 6, message: .ping(.init())))
            let next = try await connection.nextFrame()
            #expect(next == WireFrame(correlationID: 6, message: .pong(.init())))
            await connection.close()
        }
    }

    @Test("a shorter deadline behind a longer one is answered first")
    func deadlinesInOrder() async throws {
        let server = TestSupport.makeServer()
        // Each handler waits until its own deadline cancels it (one shared stream would end for both at the first).
        server.registerRaw("test.slow") { _, _ in
            try? await Task.sleep(for: .seconds(3600))
            return ByteBuffer()
        }
        try await TestSupport.withRunning([server]) {
            let connection = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            _ = try await connection.handshake()
            for (id, timeout) in [(UInt64(1), UInt32(3_000)), (2, 30)] {
                try await connection.send(WireFrame(correlationID: id, message: .request(.init(
                    method: "test.slow",
                    timeoutMilliseconds: timeout,
                    payload: ByteBuffer()
                ))))
            }
            let first = try await connection.nextFrame()
            let second = try await connection.nextFrame()
            #expect(first == WireFrame(correlationID: 2, message: .error(.init(WireError.deadlineExceeded))))
            #expect(second == WireFrame(correlationID: 1, message: .error(.init(WireError.deadlineExceeded))))
            await connection.close()
        }
    }

    @Test("a handler whose deadline passes is cancelled, and its context says how much time it had")
    func handlerCancelledAtDeadline() async throws {
        let server = TestSupport.makeServer()
        let cancelled = AsyncStream.makeStream(of: String.self)
        server.registerRaw("test.forever") { _, context in
            let remaining = context.timeRemaining
            await withTaskCancellationHandler {
                let never = AsyncStream<Void>.makeStream()
                for await _ in never.stream {}
            } onCancel: {
                cancelled.continuation.yield("cancelled with \(remaining.map { $0 <= .milliseconds(200) } == true ? "a bounded" : "no") deadline")
            }
            return ByteBuffer()
        }
        try await TestSupport.withRunning([server]) {
            let connection = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            _ = try await connection.handshake()
            try await connection.send(WireFrame(correlationID: 1, message: .request(.init(method: "test.forever", timeoutMilliseconds: 200, payload: ByteBuffer()))))
            #expect(try await connection.nextFrame() == WireFrame(correlationID: 1, message: .error(.init(WireError.deadlineExceeded))))
            var iterator = cancelled.stream.makeAsyncIterator()
            #expect(await iterator.next() == "cancelled with a bounded deadline")
            await connection.close()
        }
    }

    @Test("the client times out a request whose answer does not come")
    func clientTimeout() async throws {
        let server = TestSupport.makeServer()
        let release = AsyncStream.makeStream(of: Void.self)
        server.registerRaw("test.hang") { _, _ in
            for await _ in release.stream { break }
            return ByteBuffer()
        }
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                await #expect {
                    _ = try await client.callRaw("test.hang", payload: ByteBuffer(), timeout: .milliseconds(200))
                } throws: { error in
                    let code = (error as? WireError)?.code
                    return code == WireError.Code.timeout || code == WireError.Code.deadlineExceeded
                }
                release.continuation.finish()
            }
        }
    }

    @Test("graceful shutdown sends goaway, finishes in-flight requests, then stops")
    func gracefulShutdown() async throws {
        let server = TestSupport.makeServer()
        let started = AsyncStream.makeStream(of: Void.self)
        let release = AsyncStream.makeStream(of: Void.self)
        server.registerRaw("test.gate") { payload, _ in
            started.continuation.yield()
            for await _ in release.stream { break }
            return payload
        }
        let group = ServiceGroup(configuration: .init(services: [.init(service: server)], logger: TestSupport.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let connection = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            _ = try await connection.handshake()
            try await connection.send(WireFrame(correlationID: 1, message: .request(.init(method: "test.gate", payload: ByteBuffer(string: "x")))))
            for await _ in started.stream { break }
            await group.triggerGracefulShutdown()
            let goaway = try await connection.nextFrame()
            #expect(goaway?.message == .goaway(.init(lastCorrelationID: 1, reason: "server shutting down")))
            // A request sent after goaway is refused as retryable.
            try await connection.send(WireFrame(correlationID: 2, message: .request(.init(method: "test.gate", payload: ByteBuffer()))))
            let refused = try await connection.nextFrame()
            #expect(refused == WireFrame(correlationID: 2, message: .error(.init(WireError.shuttingDown))))
            release.continuation.finish()
            let rest = try await connection.framesUntilClose()
            #expect(rest == [WireFrame(correlationID: 1, message: .response(.init(payload: ByteBuffer(string: "x"))))])
            try await tasks.waitForAll()
        }
    }

    @Test("a response larger than the maximum frame becomes wire.frameTooLarge instead of a broken connection")
    func oversizedResponse() async throws {
        let server = TestSupport.makeServer { $0.maxFrameLength = 1024 }
        server.registerRaw("test.huge") { _, _ in ByteBuffer(repeating: 1, count: 2048) }
        try await TestSupport.withRunning([server]) {
            let client = TestSupport.makeClient(port: try await TestSupport.port(of: server))
            try await TestSupport.withRunning([client]) {
                await #expect {
                    _ = try await client.callRaw("test.huge", payload: ByteBuffer())
                } throws: { ($0 as? WireError)?.code == WireError.Code.frameTooLarge }
                let answer = try await client.call(TestSupport.echo, .init(text: "after", number: 2))
                #expect(answer.text == "after")
            }
        }
    }

    @Test("a handler cancelled by a forced shutdown answers wire.shuttingDown")
    func cancelledHandler() async {
        let frame = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await WireServer.dispatch(
                WireServerRequest(correlationID: 3, request: .init(method: "m", payload: ByteBuffer()), deadline: nil, peer: "p"),
                handlers: ["m": .init(handler: { _, _ in try Task.checkCancellation(); return ByteBuffer() })],
                maxFrameLength: 1024,
                logger: TestSupport.logger
            )
        }.value
        #expect(frame == WireFrame(correlationID: 3, message: .error(.init(WireError.shuttingDown))))
    }

    @Test("a WireError whose details would not fit in a frame is sent without them")
    func oversizedWireErrorDetails() async {
        // Before the fix a thrown WireError went out whole: a frame over the peer's limit, which closes the
        // connection and fails every request sharing it (found by konto-wire-fuzz).
        let frame = await Self.answer(maxFrameLength: 1024) {
            throw WireError(code: KontoErrorCode(rawValue: "test.rejected"), message: "rejected", details: Array(repeating: 7, count: 2048))
        }
        #expect(WireFrameCodec.encodedSize(frame) - WireFrame.lengthFieldSize <= 1024)
        guard case .error(let body) = frame.message else {
            Issue.record("answered with a \(frame.kind) frame")
            return
        }
        #expect(frame.correlationID == 4)
        #expect(body.code.rawValue == "test.rejected" && body.message == "rejected" && !body.isRetryable)
        #expect(body.details.isEmpty)
    }

    @Test("a WireErrorConvertible whose details would not fit in a frame is sent without them")
    func oversizedConvertibleErrorDetails() async {
        struct Rejected: WireErrorConvertible {
            var wireErrorCode: KontoErrorCode { KontoErrorCode(rawValue: "test.rejected") }
            var wireErrorMessage: String { "rejected" }
            var wireErrorIsRetryable: Bool { true }
            var wireErrorDetails: [UInt8] { Array(repeating: 7, count: 2048) }
        }
        let frame = await Self.answer(maxFrameLength: 1024) { throw Rejected() }
        #expect(frame == WireFrame(correlationID: 4, message: .error(.init(code: KontoErrorCode(rawValue: "test.rejected"), message: "rejected", isRetryable: true))))
        let fitting = await Self.answer(maxFrameLength: 4096) { throw Rejected() }
        #expect(fitting == WireFrame(correlationID: 4, message: .error(.init(
            code: KontoErrorCode(rawValue: "test.rejected"), message: "rejected", isRetryable: true, details: Array(repeating: 7, count: 2048)
        ))))
    }

    /// The frame `dispatch` answers request 4 with when its handler runs `body`.
    private static func answer(maxFrameLength: Int, _ body: @escaping @Sendable () throws -> ByteBuffer) async -> WireFrame {
        await WireServer.dispatch(
            WireServerRequest(correlationID: 4, request: .init(method: "m", payload: ByteBuffer()), deadline: nil, peer: "p"),
            handlers: ["m": .init(handler: { _, _ in try body() })],
            maxFrameLength: maxFrameLength,
            logger: TestSupport.logger
        )
    }

    @Test("a connection pinged by the client is answered with pong")
    func pingPong() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let connection = try await RawConnection.connect(port: try await TestSupport.port(of: server))
            _ = try await connection.handshake()
            try await connection.send(WireFrame(correlationID: 77, message: .ping(.init())))
            #expect(try await connection.nextFrame() == WireFrame(correlationID: 77, message: .pong(.init())))
            await connection.close()
        }
    }

    @Test("WireSecret and WireError never print the secret")
    func secretNotPrinted() {
        let secret = WireSecret("hunter2-very-secret")
        #expect(!"\(secret)".contains("hunter2"))
        #expect(!String(reflecting: secret).contains("hunter2"))
        let configuration = WireServer.Configuration(port: 1, serverName: "s", secret: secret)
        #expect(!"\(configuration)".contains("hunter2"))
        #expect(!"\(WireError.authenticationFailed)".contains("hunter2"))
    }
}
