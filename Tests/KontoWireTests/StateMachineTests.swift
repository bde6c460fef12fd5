import Foundation
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
        let hello = WireHandshake.clientHello(answering: .init(nonce: nonce), serviceName: "c", serverName: "s", secret: secret)
        let action = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.clientHello(hello))))
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

    @Test("a proof for another service name, another challenge, or altered versions is refused")
    func macBoundToTranscript() {
        func refused(_ hello: WireHello.ClientHello) -> Bool {
            var machine = ServerConnectionStateMachine(configuration: .init(serverName: "s", methods: [], secret: Self.secret, maxInFlight: 1))
            _ = machine.channelActive(nonce: Self.nonce)
            let action = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.clientHello(hello))))
            return action == .writeAndClose(WireFrame(correlationID: 0, message: .error(.init(WireError.authenticationFailed))))
        }
        let good = WireHandshake.clientHello(answering: .init(nonce: Self.nonce), serviceName: "identity", serverName: "s", secret: Self.secret)
        #expect(!refused(good))
        var renamed = good
        renamed.serviceName = "gateway"
        #expect(refused(renamed))
        // Recorded on another connection (another challenge): a relay or a replay.
        #expect(refused(WireHandshake.clientHello(answering: .init(nonce: [UInt8](repeating: 8, count: 32)), serviceName: "identity", serverName: "s", secret: Self.secret)))
        // The versions are in the proof: a downgrade by a relay is seen.
        var widened = good
        widened.supportedVersions = [1, 2]
        #expect(refused(widened))
        var otherNonce = good
        otherNonce.nonce = [UInt8](repeating: 9, count: 32)
        #expect(refused(otherNonce))
        // A peer key is its service's alone: the gateway's key does not prove "identity".
        let gatewayKey = WireSecret(peerKey: Self.secret.peerKeyBytes(for: "gateway"), for: "gateway")
        #expect(!refused(WireHandshake.clientHello(answering: .init(nonce: Self.nonce), serviceName: "gateway", serverName: "s", secret: gatewayKey)))
        #expect(refused(WireHandshake.clientHello(answering: .init(nonce: Self.nonce), serviceName: "identity", serverName: "s", secret: gatewayKey)))
    }

    @Test("a version 1 hello is refused wire.unsupportedVersion from its header, before anything else is read")
    func versionOneRefused() {
        // A version 1 client hello (docs/PROTOCOL.md before mutual authentication): header version byte 1.
        let hex = "0000003b0101000000000000000000000100086964656e7469747901010020aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        var buffer = ByteBuffer(hex: hex)
        #expect(throws: WireError.unsupportedVersion(1)) { try WireFrameCodec.decode(&buffer) }
    }

    @Test("reads are held at the in-flight limit and resumed when a slot frees")
    func backpressure() {
        var machine = Self.readyServer(maxInFlight: 2)
        #expect(machine.readRequested() == .read)
        #expect(machine.frameReceived(Self.request(1)) == .forward(correlationID: 1, request: .init(method: "m", payload: ByteBuffer())))
        _ = machine.frameReceived(Self.request(2))
        // Beyond the limit, in the same read: refused, not queued.
        #expect(machine.frameReceived(Self.request(3)) == .write(WireFrame(correlationID: 3, message: .error(.init(WireError.overloaded)))))
        #expect(machine.readRequested() == .none)
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

    @Test("input while the read is held is a peer that left (NIO drains its socket): nothing is started or answered, and the connection closes")
    func inputWhileReadHeld() {
        // Held at the in-flight limit.
        var machine = Self.readyServer(maxInFlight: 1)
        _ = machine.frameReceived(Self.request(1))
        #expect(machine.readRequested() == .none)
        #expect(machine.frameReceived(Self.request(2)) == .close)
        #expect(machine.isClosed)
        #expect(machine.frameReceived(WireFrame(correlationID: 3, message: .ping(.init()))) == .none)
        #expect(machine.inFlightCount == 1)

        // Held while the peer does not read its answers, below the limit.
        var unread = Self.readyServer(maxInFlight: 4)
        #expect(unread.writabilityChanged(isWritable: false) == .none)
        #expect(unread.readRequested() == .none)
        #expect(unread.frameReceived(WireFrame(correlationID: 1, message: .ping(.init()))) == .close)
        #expect(unread.frameReceived(Self.request(2)) == .none)
        #expect(unread.inFlightCount == 0)
    }

    @Test("once the channel is inactive, late answers are not written and ask for nothing; each slot frees when its handler returns")
    func inactiveWithRequestsInFlight() {
        var machine = Self.readyServer(maxInFlight: 2)
        _ = machine.frameReceived(Self.request(1))
        _ = machine.frameReceived(Self.request(2))
        _ = machine.deadlineExpired(correlationID: 2)
        #expect(machine.readRequested() == .none)
        machine.channelInactive()
        #expect(machine.isClosed)
        #expect(!machine.isReadHeld)
        #expect(machine.deadlineExpired(correlationID: 1) == .none)
        #expect(machine.inFlightCount == 2)
        for id: UInt64 in [1, 2, 3] {
            let answered = machine.answerWritten(correlationID: id)
            #expect(!answered.write)
            #expect(answered.then == .none)
        }
        #expect(machine.inFlightCount == 0)
        #expect(machine.readRequested() == .none)
        #expect(machine.frameReceived(Self.request(4)) == .none)
        #expect(machine.idleTimeout() == .none)
        #expect(machine.gracefulShutdown() == .none)
    }

    @Test("a connection is settled once its channel is inactive and every handler it started has returned")
    func settled() {
        var machine = SubscriptionStateMachineTests.server()
        _ = machine.frameReceived(Self.request(1))
        _ = machine.frameReceived(SubscriptionStateMachineTests.subscribe(2, credit: 1))
        #expect(machine.errorCaught(IOError(errnoCode: ECONNRESET, reason: "connection reset")) == .close)
        // Closing is not closed: the channel may still be active.
        #expect(!machine.isSettled)
        machine.channelInactive()
        #expect(!machine.isSettled)
        _ = machine.answerWritten(correlationID: 1)
        #expect(!machine.isSettled)
        _ = machine.subscriptionEnded(correlationID: 2)
        #expect(machine.isSettled)

        var idle = Self.readyServer()
        #expect(!idle.isSettled)
        idle.channelInactive()
        #expect(idle.isSettled)
    }

    @Test("a connection failing under the protocol (a reset) closes without an error frame; refused input still gets one")
    func transportFailure() {
        var machine = Self.readyServer()
        _ = machine.frameReceived(Self.request(1))
        #expect(machine.errorCaught(IOError(errnoCode: ECONNRESET, reason: "connection reset")) == .close)
        #expect(machine.isClosed)
        #expect(machine.errorCaught(WireError.malformedFrame("after close")) == .none)

        var refusing = Self.readyServer()
        #expect(refusing.errorCaught(WireError.malformedFrame("bad")) == .writeAndClose(WireFrame(correlationID: 0, message: .error(.init(WireError.malformedFrame("bad"))))))
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
        var machine = ClientConnectionStateMachine(configuration: .init(serviceName: "c", serverName: "s", secret: secret))
        let action = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.challenge(.init(nonce: nonce)))))
        guard case .write(let hello) = action, case .hello(.clientHello(let body)) = hello.message else {
            Issue.record("expected client hello")
            return machine
        }
        let transcript = Self.transcript(of: body)
        #expect(WireHandshake.isValidClientProof(body.mac, key: secret.proofKey(caller: "c", server: "s"), transcript: transcript))
        _ = machine.frameReceived(Self.welcome(transcript))
        return machine
    }

    static func transcript(of hello: WireHello.ClientHello) -> WireHandshake.Transcript {
        WireHandshake.Transcript(
            serverNonce: nonce, serverVersions: WireProtocolVersion.supported, serviceName: hello.serviceName,
            clientVersions: hello.supportedVersions, clientNonce: hello.nonce
        )
    }

    static func welcome(_ transcript: WireHandshake.Transcript, key: WireSecret = secret.proofKey(caller: "c", server: "s"), serverName: String = "s") -> WireFrame {
        let version = WireProtocolVersion.current
        return WireFrame(correlationID: 0, message: .welcome(.init(
            version: version, serverName: serverName, methods: [], maxInFlight: 8, maxFrameLength: 1024,
            mac: WireHandshake.serverProof(key: key, transcript: transcript, version: version, serverName: serverName)
        )))
    }

    @Test("the client completes the handshake only when the welcome proves its key over this handshake's transcript")
    func serverMustProve() {
        func outcome(_ welcome: (WireHandshake.Transcript) -> WireFrame) -> String {
            var machine = ClientConnectionStateMachine(configuration: .init(serviceName: "c", serverName: "s", secret: Self.secret))
            guard case .write(let frame) = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.challenge(.init(nonce: Self.nonce))))),
                  case .hello(.clientHello(let hello)) = frame.message
            else { return "no hello" }
            switch machine.frameReceived(welcome(Self.transcript(of: hello))) {
            case .handshakeCompleted: return "completed"
            case .closeAndFail(_, let error, _): return error.code.rawValue
            default: return "other"
            }
        }
        #expect(outcome { Self.welcome($0) } == "completed")
        // A server without the secret (any key but the caller's).
        #expect(outcome { Self.welcome($0, key: WireSecret("another deployment")) } == WireError.Code.serverAuthenticationFailed.rawValue)
        // A welcome recorded from another handshake (another client nonce): a relay replaying the real server.
        #expect(outcome { transcript in
            var other = transcript
            other.clientNonce = [UInt8](repeating: 1, count: 32)
            return Self.welcome(other)
        } == WireError.Code.serverAuthenticationFailed.rawValue)
        // The server's name is covered: a proof for "s" does not vouch for "identity".
        #expect(outcome { transcript in
            guard case .welcome(var body) = Self.welcome(transcript).message else { return Self.welcome(transcript) }
            body.serverName = "identity"
            return WireFrame(correlationID: 0, message: .welcome(body))
        } == WireError.Code.serverAuthenticationFailed.rawValue)
        // No proof at all.
        #expect(outcome { transcript in
            guard case .welcome(var body) = Self.welcome(transcript).message else { return Self.welcome(transcript) }
            body.mac = []
            return WireFrame(correlationID: 0, message: .welcome(body))
        } == WireError.Code.serverAuthenticationFailed.rawValue)
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
        guard case .fail(let failed, let error) = machine.frameReceived(WireFrame(correlationID: firstID, message: .error(.init(code: KontoErrorCode(rawValue: "x.y"), message: "m", isRetryable: true)))) else {
            Issue.record("expected failure")
            return
        }
        #expect(failed.futureResult === first.futureResult)
        #expect(error == WireError(code: KontoErrorCode(rawValue: "x.y"), message: "m", isRetryable: true))
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
