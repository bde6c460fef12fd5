import KontoWire
import NIOCore
import Synchronization
import Testing

/// Hostile peers against a real server over TCP. Each case checks what the attacker sees and then
/// that a well-behaved client is still served.
@Suite("Hostile input")
struct HostileInputTests {
    enum Outcome: Sendable {
        /// An error frame with this code (correlation id 0), then close.
        case errorAndClose(KontoErrorCode)
        /// Closed without an error frame (after the challenge, which every peer gets first).
        case plainClose
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var handshakeFirst: Bool
        var bytes: ByteBuffer
        var expected: Outcome
        var testDescription: String { self.name }
    }

    static func frameBytes(_ frame: WireFrame) -> ByteBuffer {
        var buffer = ByteBuffer()
        WireFrameCodec.encode(frame, into: &buffer)
        return buffer
    }

    static let cases: [Case] = {
        var tooLong = ByteBuffer()
        tooLong.writeInteger(UInt32(WireFrame.defaultMaximumLength + 1))
        tooLong.writeBytes([1, 3, 0, 0])
        let request = frameBytes(WireFrame(correlationID: 1, message: .request(.init(method: "test.echo", payload: ByteBuffer()))))
        var preHandshakePrefix = ByteBuffer()
        preHandshakePrefix.writeInteger(UInt32(900 * 1024))
        var truncated = request
        truncated.moveWriterIndex(to: truncated.writerIndex - 3)
        return [
            .init(name: "length over the maximum", handshakeFirst: true, bytes: tooLong, expected: .errorAndClose(WireError.Code.frameTooLarge)),
            .init(name: "length over the maximum before hello", handshakeFirst: false, bytes: tooLong, expected: .errorAndClose(WireError.Code.frameTooLarge)),
            .init(name: "length 0", handshakeFirst: true, bytes: ByteBuffer(hex: "00000000"), expected: .errorAndClose(WireError.Code.malformedFrame)),
            .init(name: "unknown kind", handshakeFirst: true, bytes: WireFrameDecoderTests.rawFrame(kind: 200, body: []), expected: .errorAndClose(WireError.Code.malformedFrame)),
            .init(name: "unsupported version", handshakeFirst: false, bytes: WireFrameDecoderTests.rawFrame(kind: 1, version: 7, body: []), expected: .errorAndClose(WireError.Code.unsupportedVersion)),
            .init(name: "request before hello", handshakeFirst: false, bytes: request, expected: .errorAndClose(WireError.Code.handshakeRequired)),
            .init(name: "ping before hello", handshakeFirst: false, bytes: frameBytes(WireFrame(correlationID: 1, message: .ping(.init()))), expected: .errorAndClose(WireError.Code.handshakeRequired)),
            .init(
                name: "invalid UTF-8 in a method name",
                handshakeFirst: true,
                bytes: WireFrameDecoderTests.rawFrame(kind: 3, body: [1, 1, 0, 3, 0x61, 0xC0, 0xAF]),
                expected: .errorAndClose(WireError.Code.malformedFrame)
            ),
            .init(name: "response sent by a client", handshakeFirst: true, bytes: frameBytes(WireFrame(correlationID: 1, message: .response(.init(payload: ByteBuffer())))), expected: .errorAndClose(WireError.Code.protocolViolation)),
            .init(name: "correlation id 0 on a request", handshakeFirst: true, bytes: frameBytes(WireFrame(correlationID: 0, message: .request(.init(method: "test.echo", payload: ByteBuffer())))), expected: .errorAndClose(WireError.Code.protocolViolation)),
            .init(name: "an event sent by a client", handshakeFirst: true, bytes: frameBytes(WireFrame(correlationID: 1, message: .event(.init(subscriptionID: 1, topic: "t", payload: ByteBuffer())))), expected: .errorAndClose(WireError.Code.protocolViolation)),
            .init(name: "an ack with an unknown disposition", handshakeFirst: true, bytes: WireFrameDecoderTests.rawFrame(kind: 7, body: [9, 0, 0]), expected: .errorAndClose(WireError.Code.malformedFrame)),
            .init(name: "an ack with bytes after its reason", handshakeFirst: true, bytes: WireFrameDecoderTests.rawFrame(kind: 7, body: [1, 0, 0, 0xFF]), expected: .errorAndClose(WireError.Code.malformedFrame)),
            .init(name: "a 2-byte credit header", handshakeFirst: true, bytes: WireFrameDecoderTests.rawFrame(kind: 3, body: [2, 1, 0, 1, 0x6D, 5, 0, 2, 0, 1]), expected: .errorAndClose(WireError.Code.malformedFrame)),
            .init(name: "truncated frame then EOF", handshakeFirst: true, bytes: truncated, expected: .plainClose),
            // Once answered with wire.unknownMethod quoting the name, whose encoding trapped and took the server down.
            .init(name: "a 65,530-byte method name", handshakeFirst: true, bytes: rawRequest([(1, 65_530)]), expected: .errorAndClose(WireError.Code.malformedFrame)),
            .init(name: "a 256-byte method name", handshakeFirst: true, bytes: rawRequest([(1, 256)]), expected: .errorAndClose(WireError.Code.malformedFrame)),
            .init(name: "a 65,000-byte request id", handshakeFirst: true, bytes: rawRequest([(1, 9), (3, 65_000)]), expected: .errorAndClose(WireError.Code.malformedFrame)),
            .init(name: "a 300-byte traceparent", handshakeFirst: true, bytes: rawRequest([(1, 9), (4, 300)]), expected: .errorAndClose(WireError.Code.malformedFrame)),
            // Over the pre-handshake cap (WireLimits.maximumHandshakeFrameLength): refused before its body is read.
            .init(
                name: "a 60,000-byte service name in the hello",
                handshakeFirst: false,
                bytes: WireFrameDecoderTests.rawFrame(kind: 1, correlationID: 0, body: [1] + OversizedFieldTests.str16([UInt8](repeating: 0x73, count: 60_000)) + [1, 1, 0, 0]),
                expected: .errorAndClose(WireError.Code.frameTooLarge)
            ),
            .init(
                name: "a 300-byte service name in the hello",
                handshakeFirst: false,
                bytes: WireFrameDecoderTests.rawFrame(kind: 1, correlationID: 0, body: [1] + OversizedFieldTests.str16([UInt8](repeating: 0x73, count: 300)) + [1, 1, 0, 0]),
                expected: .errorAndClose(WireError.Code.malformedFrame)
            ),
            // Only the length prefix is sent: the refusal must not wait for a body the server would have to buffer.
            .init(name: "a 900 KiB length prefix before hello, body never sent", handshakeFirst: false, bytes: preHandshakePrefix, expected: .errorAndClose(WireError.Code.frameTooLarge)),
            .init(
                name: "a 60,000-byte event topic from a client",
                handshakeFirst: true,
                bytes: WireFrameDecoderTests.rawFrame(kind: 6, body: OversizedFieldTests.str16([UInt8](repeating: 0x74, count: 60_000))),
                expected: .errorAndClose(WireError.Code.malformedFrame)
            ),
        ]
    }()

    /// A request frame (id 1) whose headers are `(tag, length)` pairs of `a`s, built by hand: the encoder would cut them.
    static func rawRequest(_ headers: [(tag: UInt8, length: Int)]) -> ByteBuffer {
        var body: [UInt8] = [UInt8(headers.count)]
        for header in headers {
            body += [header.tag] + OversizedFieldTests.str16([UInt8](repeating: 0x61, count: header.length))
        }
        return WireFrameDecoderTests.rawFrame(kind: 3, body: body)
    }

    @Test("an unknown method at the name limit is answered on its request, and the connection stays open")
    func unknownLongMethod() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let connection = try await RawConnection.connect(port: port)
            _ = try await connection.handshake()
            let method = String(repeating: "a", count: WireLimits.maximumNameLength)
            try await connection.send(WireFrame(correlationID: 5, message: .request(.init(method: method, payload: ByteBuffer()))))
            let answer = try await connection.nextFrame()
            guard case .error(let body) = answer?.message else {
                Issue.record("expected an error frame, got \(String(describing: answer))")
                return
            }
            #expect(answer?.correlationID == 5)
            #expect(body.code == WireError.Code.unknownMethod)
            try await connection.send(WireFrame(correlationID: 6, message: .request(.init(method: "test.raw", payload: ByteBuffer(string: "still")))))
            #expect(try await connection.nextFrame() == WireFrame(correlationID: 6, message: .response(.init(payload: ByteBuffer(string: "still")))))
            await connection.close()
        }
    }

    @Test("connections over the server's limit are refused with wire.overloaded, and served again once one closes")
    func connectionLimit() async throws {
        let server = TestSupport.makeServer { $0.maxConnections = 2 }
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let first = try await RawConnection.connect(port: port)
            let second = try await RawConnection.connect(port: port)
            for connection in [first, second] {
                guard case .welcome = try await connection.handshake()?.message else {
                    Issue.record("a connection within the limit was not welcomed")
                    return
                }
            }
            let third = try await RawConnection.connect(port: port)
            let frames = try await third.framesUntilClose()
            #expect(frames == [WireFrame(correlationID: 0, message: .error(.init(WireError.tooManyConnections)))])
            await first.close()
            // The count drops when the server sees the close; poll until a new connection is welcomed.
            let deadline = ContinuousClock.now + .seconds(30)
            var welcomed = false
            while !welcomed, ContinuousClock.now < deadline {
                let next = try await RawConnection.connect(port: port)
                if case .hello(.challenge) = try await next.nextFrame()?.message {
                    welcomed = true
                } else {
                    try await Task.sleep(for: .milliseconds(10))
                }
                await next.close()
            }
            #expect(welcomed)
            await second.close()
        }
    }

    @Test("hostile bytes get the expected outcome and the server keeps serving", arguments: Self.cases)
    func hostile(_ hostileCase: Case) async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let attacker = try await RawConnection.connect(port: port)
            if hostileCase.handshakeFirst {
                let welcome = try await attacker.handshake()
                guard case .welcome = welcome?.message else {
                    Issue.record("handshake failed: \(String(describing: welcome))")
                    return
                }
            } else {
                guard case .hello(.challenge) = try await attacker.nextFrame()?.message else {
                    Issue.record("expected a challenge first")
                    return
                }
            }
            try await attacker.send(hostileCase.bytes)
            switch hostileCase.expected {
            case .errorAndClose(let code):
                let frames = try await attacker.framesUntilClose()
                #expect(frames.count == 1)
                guard case .error(let body) = frames.first?.message else {
                    Issue.record("expected an error frame, got \(frames)")
                    return
                }
                #expect(body.code == code)
                #expect(frames.first?.correlationID == 0)
            case .plainClose:
                // Half-close our side: the server sees EOF inside the frame.
                try await attacker.channel.close(mode: .output)
                let frames = try await attacker.framesUntilClose()
                #expect(frames.isEmpty, "expected a plain close, got \(frames)")
            }
            try await Self.expectServing(port: port)
        }
    }

    @Test("a wrong HMAC is refused with wire.authenticationFailed and close")
    func wrongHMAC() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let attacker = try await RawConnection.connect(port: port)
            let answer = try await attacker.handshake(secret: WireSecret("wrong"))
            #expect(answer?.message == .error(.init(WireError.authenticationFailed)))
            #expect(try await attacker.framesUntilClose().isEmpty)
            try await Self.expectServing(port: port)
        }
    }

    @Test("a client with the wrong secret gets the authentication error, not a hang")
    func clientWithWrongSecret() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            var configuration = WireClient.Configuration(port: port, serviceName: "intruder", serverName: "test-server", secret: WireSecret("wrong"))
            configuration.connectionCount = 1
            let client = WireClient(configuration: configuration, logger: TestSupport.logger)
            try await TestSupport.withRunning([client]) {
                await #expect {
                    _ = try await client.call(TestSupport.echo, .init(text: "", number: 0), timeout: .seconds(20))
                } throws: { ($0 as? WireError)?.code == WireError.Code.authenticationFailed }
            }
        }
    }

    @Test("no common protocol version is refused with wire.unsupportedVersion")
    func noCommonVersion() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let attacker = try await RawConnection.connect(port: port)
            let answer = try await attacker.handshake(versions: [3, 4])
            guard case .error(let body) = answer?.message else {
                Issue.record("expected error, got \(String(describing: answer))")
                return
            }
            #expect(body.code == WireError.Code.unsupportedVersion)
            #expect(try await attacker.framesUntilClose().isEmpty)
        }
    }

    @Test("10 MB of random bytes end in an error and close, and the server keeps serving")
    func randomBytes() async throws {
        let server = TestSupport.makeServer()
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let attacker = try await RawConnection.connect(port: port)
            var generator = SystemRandomNumberGenerator()
            var chunk = ByteBuffer()
            // Written in pieces; the server closes long before all of it is sent, so failed writes are expected.
            for _ in 0..<(10 * 1024) {
                chunk.clear()
                for _ in 0..<128 { chunk.writeInteger(generator.next() as UInt64) }
                attacker.channel.write(chunk, promise: nil)
            }
            attacker.channel.flush()
            let frames = try await attacker.framesUntilClose()
            // The challenge arrives first; what follows is at most one error frame.
            let afterChallenge = frames.drop { if case .hello = $0.message { true } else { false } }
            #expect(afterChallenge.count <= 1)
            if let last = afterChallenge.last {
                guard case .error = last.message else {
                    Issue.record("expected an error frame, got \(last)")
                    return
                }
            }
            try await Self.expectServing(port: port)
        }
    }

    @Test("a client that connects and sends nothing is closed after the idle timeout")
    func silentClient() async throws {
        // Long enough that the well-behaved client checked afterwards never idles out between its
        // frames on a loaded machine; short enough to keep the test quick.
        let server = TestSupport.makeServer { $0.idleTimeout = .seconds(2) }
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let silent = try await RawConnection.connect(port: port)
            let frames = try await silent.framesUntilClose()
            #expect(frames.count == 1)
            guard case .hello(.challenge) = frames.first?.message else {
                Issue.record("expected only the challenge, got \(frames)")
                return
            }
            try await Self.expectServing(port: port)
        }
    }

    @Test("a client that never reads its responses cannot make the server buffer without bound")
    func neverReads() async throws {
        let handled = Atomic<Int>(0)
        let maxInFlight = 8
        let server = TestSupport.makeServer { $0.maxInFlightPerConnection = maxInFlight }
        let bigResponse = ByteBuffer(repeating: 0x5A, count: 256 * 1024)
        server.registerRaw("test.big") { _, _ in
            handled.add(1, ordering: .relaxed)
            return bigResponse
        }
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let greedy = try await RawConnection.connect(port: port)
            _ = try await greedy.handshake()
            // Stop reading: from here the server's responses pile up in the socket buffers.
            try await greedy.channel.setOption(.autoRead, value: false).get()
            let total = 2_000
            for id in 1...total {
                var buffer = ByteBuffer()
                WireFrameCodec.encode(
                    WireFrame(correlationID: UInt64(id), message: .request(.init(method: "test.big", payload: ByteBuffer()))),
                    into: &buffer
                )
                greedy.channel.write(buffer, promise: nil)
            }
            greedy.channel.flush()
            // Wait until the server has filled its in-flight window, then give it room to misbehave.
            let deadline = ContinuousClock.now + .seconds(30)
            while handled.load(ordering: .relaxed) < maxInFlight, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            try await Task.sleep(for: .seconds(1))
            let count = handled.load(ordering: .relaxed)
            #expect(count >= maxInFlight)
            // 2,000 × 256 KiB would be 500 MiB; what the kernel buffers plus the window is far less.
            #expect(count < total / 4, "server kept handling requests nobody reads: \(count)")
            try await Self.expectServing(port: port)
            await greedy.close()
        }
    }

    @Test("a client that pipelines large answers and never reads them is no longer read: the server holds a bounded amount for it, and another client is served promptly")
    func neverReadsLargeAnswers() async throws {
        let maxInFlight = 32
        let answerSize = 60 * 1024
        let total = 20_000
        // What the server may hold for the connection: its high water mark (256 KiB), the answers of the requests
        // it had accepted when the channel became unwritable (32 × 60 KiB), and small refusals. Without
        // backpressure it holds every answer: 20,000 × 60 KiB is 1.2 GB.
        let cap = 16 << 20
        let handled = Atomic<Int>(0)
        let server = TestSupport.makeServer { $0.maxInFlightPerConnection = maxInFlight }
        let profile = ByteBuffer(repeating: 0x50, count: answerSize)
        server.registerRaw("test.profile") { _, _ in
            handled.add(1, ordering: .relaxed)
            return profile
        }
        try await TestSupport.withRunning([server]) {
            let port = try await TestSupport.port(of: server)
            let greedy = try await RawConnection.connect(port: port)
            guard case .welcome = try await greedy.handshake()?.message else {
                Issue.record("handshake failed")
                return
            }
            // From here nothing is read: the answers fill the kernel's buffers, then the server's.
            try await greedy.channel.setOption(.autoRead, value: false).get()

            // Batches of at most the in-flight limit, each sent once the server has answered the one before, so that
            // it accepts every request it reads (none are refused wire.overloaded) and only its reading can stop them.
            var sent = 0
            var load: WireServer.ConnectionLoad?
            var stoppedReading = false
            sending: while sent < total {
                var batch = ByteBuffer()
                for id in (sent + 1)...min(sent + maxInFlight, total) {
                    WireFrameCodec.encode(
                        WireFrame(correlationID: UInt64(id), message: .request(.init(method: "test.profile", payload: ByteBuffer()))),
                        into: &batch
                    )
                }
                sent = min(sent + maxInFlight, total)
                greedy.channel.writeAndFlush(batch, promise: nil)
                // Bounded polling: the server's state is only observable from outside its event loop.
                let deadline = ContinuousClock.now + .seconds(30)
                while ContinuousClock.now < deadline {
                    load = await server.connectionLoads().first
                    if let load {
                        if load.isReadHeld, load.inFlight == 0 {
                            // Holding its read with nothing to do: the server waits for the peer to drain.
                            stoppedReading = true
                            break sending
                        }
                        // The unbounded server never stops; end before the machine runs out of memory.
                        if load.bufferedOutboundBytes > 4 * cap { break sending }
                        if load.requestsReceived >= sent, load.inFlight == 0 { continue sending }
                    }
                    try await Task.sleep(for: .milliseconds(1))
                }
                Issue.record("the server neither read the batch nor stopped reading: \(String(describing: load))")
                break
            }
            let held = load?.bufferedOutboundBytes ?? 0
            print("neverReadsLargeAnswers: sent \(sent), handled \(handled.load(ordering: .relaxed)), server holds \(held) bytes unwritten (\(String(describing: load)))")
            #expect(stoppedReading, "the server kept reading a connection that does not drain its answers")
            #expect(held <= cap, "the server holds \(held) unwritten bytes for a peer that does not read")
            #expect(handled.load(ordering: .relaxed) < total)

            // Another client on the same server is served while the greedy one is held.
            let client = TestSupport.makeClient(port: port)
            try await TestSupport.withRunning([client]) {
                for _ in 0..<20 {
                    let answer = try await TestSupport.within(seconds: 10) {
                        try await client.callRaw("test.profile", payload: ByteBuffer(), timeout: .seconds(10))
                    }
                    #expect(answer.readableBytes == answerSize)
                }
                let echo = TestSupport.Echo(text: "still served", number: 6)
                #expect(try await client.call(TestSupport.echo, echo, timeout: .seconds(10)) == echo)
            }
            let after = await server.connectionLoads().map(\.bufferedOutboundBytes).max() ?? 0
            #expect(after <= cap)
            await greedy.close()
        }
    }

    /// A fresh, well-behaved connection completes a call.
    static func expectServing(port: Int) async throws {
        let connection = try await RawConnection.connect(port: port)
        let welcome = try await connection.handshake()
        guard case .welcome = welcome?.message else {
            Issue.record("server no longer completes handshakes: \(String(describing: welcome))")
            return
        }
        try await connection.send(WireFrame(correlationID: 1, message: .request(.init(method: "test.raw", payload: ByteBuffer(string: "ok")))))
        let answer = try await connection.nextFrame()
        #expect(answer == WireFrame(correlationID: 1, message: .response(.init(payload: ByteBuffer(string: "ok")))))
        await connection.close()
    }
}
