import KontoWire
import NIOCore
import NIOEmbedded
import Testing

@Suite("Connection state machines")
struct StateMachineTests {
    static let secret = WireSecret("state-machine-secret")
    static let nonce = [UInt8](repeating: 7, count: 32)

    static func readyServer(maxInFlight: Int = 2) -> ServerConnectionStateMachine {
        var machine = ServerConnectionStateMachine(configuration: .init(
            serverName: "s",
            methods: ["m"],
            secret: secret,
            maxInFlight: maxInFlight
        ))
        _ = machine.channelActive(nonce: nonce)
        let mac = WireHandshake.mac(secret: secret, nonce: nonce, serviceName: "c")
        let action = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.clientHello(.init(serviceName: "c", mac: mac)))))
        guard case .write(let frame) = action, case .welcome = frame.message else {
            Issue.record("handshake did not complete: \(action)")
            return machine
        }
        return machine
    }

    static func request(_ id: UInt64, method: String = "m") -> WireFrame {
        WireFrame(correlationID: id, message: .request(.init(method: method, payload: ByteBuffer())))
    }

    @Test("the server refuses anything but hello before the handshake")
    func handshakeRequired() {
        var machine = ServerConnectionStateMachine(configuration: .init(serverName: "s", methods: ["m"], secret: Self.secret, maxInFlight: 1))
        guard case .write(let challenge) = machine.channelActive(nonce: Self.nonce) else {
            Issue.record("expected a challenge")
            return
        }
        #expect(challenge.message == .hello(.challenge(.init(nonce: Self.nonce))))
        let action = machine.frameReceived(Self.request(1))
        #expect(action == .writeAndClose(WireFrame(correlationID: 0, message: .error(.init(WireError.handshakeRequired)))))
        #expect(machine.frameReceived(Self.request(2)) == .none)
    }

    @Test("a proof for another service name is refused")
    func macBoundToName() {
        var machine = ServerConnectionStateMachine(configuration: .init(serverName: "s", methods: [], secret: Self.secret, maxInFlight: 1))
        _ = machine.channelActive(nonce: Self.nonce)
        let mac = WireHandshake.mac(secret: Self.secret, nonce: Self.nonce, serviceName: "identity")
        let action = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.clientHello(.init(serviceName: "gateway", mac: mac)))))
        #expect(action == .writeAndClose(WireFrame(correlationID: 0, message: .error(.init(WireError.authenticationFailed)))))
    }

    @Test("reads are held at the in-flight limit and resumed when a slot frees")
    func backpressure() {
        var machine = Self.readyServer(maxInFlight: 2)
        #expect(machine.readRequested() == .read)
        #expect(machine.frameReceived(Self.request(1)) == .forward(correlationID: 1, request: .init(method: "m", payload: ByteBuffer())))
        _ = machine.frameReceived(Self.request(2))
        #expect(machine.readRequested() == .none)
        // Beyond the limit (already read from the socket): refused, not queued.
        #expect(machine.frameReceived(Self.request(3)) == .write(WireFrame(correlationID: 3, message: .error(.init(WireError.overloaded)))))
        let answered = machine.answerWritten(correlationID: 1)
        #expect(answered.write)
        #expect(answered.then == .read)
    }

    @Test("reads are held while the channel is unwritable, in-flight requests still answer, and reading resumes once it drains")
    func writabilityBackpressure() {
        var machine = Self.readyServer(maxInFlight: 4)
        _ = machine.frameReceived(Self.request(1))
        // A peer that does not read its answers: the channel went over its high water mark.
        #expect(machine.writabilityChanged(isWritable: false) == .none)
        #expect(machine.readRequested() == .none)
        #expect(machine.isReadHeld)
        // The accepted request still finishes and is written, but the freed slot does not resume reading.
        let answered = machine.answerWritten(correlationID: 1)
        #expect(answered.write)
        #expect(answered.then == .none)
        #expect(machine.writabilityChanged(isWritable: true) == .read)
        #expect(!machine.isReadHeld)
        #expect(machine.readRequested() == .read)
    }

    @Test("writability alone does not resume reading held by the in-flight limit")
    func writabilityAndInFlightLimit() {
        var machine = Self.readyServer(maxInFlight: 1)
        _ = machine.frameReceived(Self.request(1))
        #expect(machine.writabilityChanged(isWritable: false) == .none)
        #expect(machine.readRequested() == .none)
        #expect(machine.writabilityChanged(isWritable: true) == .none)
        #expect(machine.answerWritten(correlationID: 1).then == .read)
    }

    @Test("an unknown method is answered without taking a slot")
    func unknownMethod() {
        var machine = Self.readyServer(maxInFlight: 1)
        #expect(machine.frameReceived(Self.request(1, method: "x")) == .write(WireFrame(correlationID: 1, message: .error(.init(WireError.unknownMethod("x"))))))
        #expect(machine.inFlightCount == 0)
    }

    @Test("after a deadline error, the late answer is dropped but the slot is held until it comes")
    func deadline() {
        var machine = Self.readyServer(maxInFlight: 1)
        _ = machine.frameReceived(Self.request(1))
        #expect(machine.deadlineExpired(correlationID: 1) == .write(WireFrame(correlationID: 1, message: .error(.init(WireError.deadlineExceeded)))))
        #expect(machine.deadlineExpired(correlationID: 1) == .none)
        #expect(machine.inFlightCount == 1)
        #expect(machine.answerWritten(correlationID: 1).write == false)
        #expect(machine.inFlightCount == 0)
    }

    @Test("goaway drains: in-flight requests finish, new ones are refused, then close")
    func goaway() {
        var machine = Self.readyServer()
        _ = machine.frameReceived(Self.request(4))
        #expect(machine.gracefulShutdown() == .write(WireFrame(correlationID: 0, message: .goaway(.init(lastCorrelationID: 4, reason: "server shutting down")))))
        #expect(machine.frameReceived(Self.request(5)) == .write(WireFrame(correlationID: 5, message: .error(.init(WireError.shuttingDown)))))
        let answered = machine.answerWritten(correlationID: 4)
        #expect(answered.write)
        #expect(answered.then == .close)
    }

    @Test("idle closes only a connection with nothing in flight")
    func idle() {
        var machine = Self.readyServer()
        _ = machine.frameReceived(Self.request(1))
        #expect(machine.idleTimeout() == .none)
        _ = machine.answerWritten(correlationID: 1)
        #expect(machine.idleTimeout() == .close)
    }

    @Test("a repeated correlation id in flight is a protocol violation")
    func duplicateID() {
        var machine = Self.readyServer()
        _ = machine.frameReceived(Self.request(1))
        guard case .writeAndClose(let frame) = machine.frameReceived(Self.request(1)),
              case .error(let body) = frame.message
        else {
            Issue.record("expected close")
            return
        }
        #expect(body.code == WireError.Code.protocolViolation)
    }

    // MARK: Client

    static func readyClient(loop: EmbeddedEventLoop) -> ClientConnectionStateMachine {
        var machine = ClientConnectionStateMachine(configuration: .init(serviceName: "c", secret: secret))
        let action = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.challenge(.init(nonce: nonce)))))
        guard case .write(let hello) = action, case .hello(.clientHello(let body)) = hello.message else {
            Issue.record("expected client hello")
            return machine
        }
        #expect(WireHandshake.isValid(mac: body.mac, secret: secret, nonce: nonce, serviceName: "c"))
        _ = machine.frameReceived(WireFrame(correlationID: 0, message: .welcome(.init(version: 1, serverName: "s", methods: [], maxInFlight: 8, maxFrameLength: 1024))))
        return machine
    }

    @Test("responses are matched by correlation id in any order")
    func outOfOrder() throws {
        let loop = EmbeddedEventLoop()
        var machine = Self.readyClient(loop: loop)
        let first = loop.makePromise(of: WireResponse.self)
        let second = loop.makePromise(of: WireResponse.self)
        let (_, firstID) = machine.sendRequest(.init(method: "m", payload: ByteBuffer()), promise: first)
        let (_, secondID) = machine.sendRequest(.init(method: "m", payload: ByteBuffer()), promise: second)
        #expect(firstID != secondID)
        guard case .succeed(let promise, _) = machine.frameReceived(WireFrame(correlationID: secondID, message: .response(.init(payload: ByteBuffer(string: "2"))))) else {
            Issue.record("expected success")
            return
        }
        #expect(promise.futureResult === second.futureResult)
        guard case .fail(let failed, let error) = machine.frameReceived(WireFrame(correlationID: firstID, message: .error(.init(code: "x.y", message: "m", isRetryable: true)))) else {
            Issue.record("expected failure")
            return
        }
        #expect(failed.futureResult === first.futureResult)
        #expect(error == WireError(code: "x.y", message: "m", isRetryable: true))
        first.succeed(.init(payload: ByteBuffer()))
        second.succeed(.init(payload: ByteBuffer()))
    }

    @Test("goaway fails the requests the server will not answer and refuses new ones")
    func clientGoaway() {
        let loop = EmbeddedEventLoop()
        var machine = Self.readyClient(loop: loop)
        let promises = (0..<3).map { _ in loop.makePromise(of: WireResponse.self) }
        for promise in promises { _ = machine.sendRequest(.init(method: "m", payload: ByteBuffer()), promise: promise) }
        guard case .goingAway(let failing, let close) = machine.frameReceived(WireFrame(correlationID: 0, message: .goaway(.init(lastCorrelationID: 2, reason: "")))) else {
            Issue.record("expected goingAway")
            return
        }
        #expect(failing.count == 1 && failing[0].futureResult === promises[2].futureResult)
        #expect(!close)
        let late = loop.makePromise(of: WireResponse.self)
        guard case .fail(_, let error) = machine.sendRequest(.init(method: "m", payload: ByteBuffer()), promise: late).0 else {
            Issue.record("expected refusal")
            return
        }
        #expect(error.code == WireError.Code.shuttingDown)
        for promise in promises + [late] { promise.succeed(.init(payload: ByteBuffer())) }
    }

    @Test("an unanswered heartbeat closes the connection and fails pending requests")
    func heartbeat() {
        let loop = EmbeddedEventLoop()
        var machine = Self.readyClient(loop: loop)
        let pending = loop.makePromise(of: WireResponse.self)
        _ = machine.sendRequest(.init(method: "m", payload: ByteBuffer()), promise: pending)
        guard case .write(let ping) = machine.heartbeatDue(), case .ping = ping.message else {
            Issue.record("expected ping")
            return
        }
        guard case .closeAndFail(let failing, let error, _) = machine.heartbeatDue() else {
            Issue.record("expected close")
            return
        }
        #expect(failing.count == 1)
        #expect(error.isRetryable)
        pending.succeed(.init(payload: ByteBuffer()))
    }
}
