import KontoWire
import KontoWireFuzzSupport
import NIOCore

/// Drives ``ClientConnectionStateMachine`` the way ClientConnectionHandler does, with the fuzz
/// input as the server and as the callers.
///
/// Every frame the client writes is encoded and decoded back; every promise must be completed
/// exactly once. Crashes, failed round trips and broken invariants are findings.
struct ClientFuzzHarness {
    static let secret = WireSecret("konto-fuzz-secret")
    static let serviceName = "fuzz-client"
    static let nonce: [UInt8] = (0..<UInt8(WireHello.Challenge.nonceSize)).map { $0 &* 5 &+ 1 }
    /// As on the server side: small enough for short inputs, big enough for any 65,535-byte field.
    static let maxFrameLength = 1 << 17
    static let configuration = ClientConnectionStateMachine.Configuration(serviceName: serviceName, serverName: "fuzz-server", secret: secret)

    private let ledger = PromiseLedger()
    private var machine = ClientConnectionStateMachine(configuration: Self.configuration, nonce: Self.clientNonce)
    /// Requests written and not yet answered, by correlation id.
    private var pending: [UInt64: EventLoopPromise<WireResponse>] = [:]
    /// The nonce of the last challenge, to check the hello the client answers with.
    private var challengeNonce: [UInt8]?
    private var challengeVersions: [UInt8] = []
    /// The machine closed (closeAndFail) and the channel with it.
    private var closed = false

    static func run(_ bytes: UnsafeRawBufferPointer) {
        var harness = ClientFuzzHarness()
        var input = FuzzInput(bytes)
        harness.connect(handshake: true)
        harness.drive(&input)
        harness.ledger.finish()
    }

    private mutating func drive(_ input: inout FuzzInput) {
        while true {
            switch input.nextStep() {
            case .end:
                self.disconnect()
                return
            case .frame:
                let frame: WireFrame?
                do {
                    frame = try input.decodeFrame(maximumLength: Self.maxFrameLength)
                } catch {
                    self.perform(self.machine.errorCaught(error))
                    self.disconnect()
                    return
                }
                guard let frame else {
                    self.perform(self.machine.errorCaught(WireError.malformedFrame("connection ended inside a frame")))
                    self.disconnect()
                    return
                }
                FrameRoundTrip.encode(frame)
                self.receive(frame)
            case .control(let byte):
                self.control(ClientFuzzStep(control: byte), &input)
            }
            precondition(self.machine.pendingCount == self.pending.count, "pending count disagrees with the model")
        }
    }

    private mutating func control(_ step: ClientFuzzStep, _ input: inout FuzzInput) {
        switch step {
        case .sendRequest:
            let flags = input.byte()
            let method = input.shortString()
            let payload = input.shortBytes()
            self.send(WireRequest(
                method: method.isEmpty ? "echo" : method,
                timeoutMilliseconds: flags & 1 == 0 ? nil : UInt32(flags) * 1000,
                requestID: flags & 2 == 0 ? nil : "req-\(flags)",
                traceParent: flags & 4 == 0 ? nil : "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                payload: ByteBuffer(bytes: payload)
            ))
        case .sendLongRequest:
            let field = input.byte()
            let length = input.uint24()
            var request = WireRequest(method: "echo", timeoutMilliseconds: 1000, payload: ByteBuffer(string: "{}"))
            // Callers are not bound by the format: headers up to 4 times the name limit, payloads
            // just past the frame limit.
            if field % 4 == 3 {
                request.payload = ByteBuffer(repeating: field, count: length % (Self.maxFrameLength + 64))
            } else {
                let text = input.longString(byteCount: length % (4 * WireLimits.maximumNameLength + 4))
                switch field % 4 {
                case 0: request.method = text
                case 1: request.requestID = text
                default: request.traceParent = text
                }
            }
            self.send(request)
        case .requestTimedOut:
            let id = self.pick(input.byte(), other: UInt64(input.byte()))
            let action = self.machine.requestTimedOut(correlationID: id)
            if case .fail(let promise, let error) = action {
                precondition(error.code == WireError.Code.timeout && self.pending[id].map { $0.futureResult === promise.futureResult } == true,
                             "a timeout failed the wrong request")
            } else {
                precondition(action.isNone && self.pending[id] == nil, "a timeout of a pending request did nothing")
            }
            self.perform(action)
        case .heartbeatDue:
            self.perform(self.machine.heartbeatDue())
        case .errorCaught:
            let error: any Error = switch input.byte() % 3 {
            case 0: WireError.frameTooLarge(Self.maxFrameLength + 1, max: Self.maxFrameLength)
            case 1: WireError.malformedFrame("fuzz")
            default: FuzzChannelError()
            }
            self.perform(self.machine.errorCaught(error))
        case .channelInactive:
            self.disconnect()
        case .respond:
            let id = self.pick(input.byte(), other: UInt64(input.byte()))
            let payload = input.shortBytes()
            self.transmitToMachine(WireFrame(correlationID: id, message: .response(.init(payload: ByteBuffer(bytes: payload)))))
        case .respondWithError:
            let selector = input.byte()
            let id = selector == 0xFF ? 0 : self.pick(selector, other: UInt64(input.byte()))
            let retryable = input.byte() & 1 == 1
            let code = input.shortString()
            let message = input.shortString()
            self.transmitToMachine(WireFrame(correlationID: id, message: .error(.init(code: KontoErrorCode(rawValue: code), message: message, isRetryable: retryable))))
        case .bigFrame:
            self.receiveBigFrame(&input)
        case .goaway:
            let selector = input.byte()
            let ids = self.pending.keys.sorted()
            let last: UInt64 = switch selector {
            case 0: 0
            case 0xFF: .max
            default: ids.isEmpty ? UInt64(selector) : ids[Int(selector) % ids.count]
            }
            self.transmitToMachine(WireFrame(correlationID: 0, message: .goaway(.init(lastCorrelationID: last, reason: "fuzz"))))
        case .newConnection:
            self.disconnect()
            self.connect(handshake: true)
        case .newConnectionAwaitingChallenge:
            self.disconnect()
            self.connect(handshake: false)
        case .challenge:
            let nonce = (0..<WireHello.Challenge.nonceSize).map { _ in input.byte() }
            self.transmitToMachine(WireFrame(correlationID: 0, message: .hello(.challenge(.init(nonce: nonce)))))
        case .welcome:
            let version = input.byte() % 3
            let name = input.shortString()
            self.transmitToMachine(Self.welcome(version: version, serverName: name))
        }
    }

    /// A server frame with one long field, capped at the format's limit.
    private mutating func receiveBigFrame(_ input: inout FuzzInput) {
        let shape = input.byte()
        let length = min(input.uint24(), Int(UInt16.max))
        let text = input.longString(byteCount: length)
        let id = self.pick(input.byte(), other: UInt64(shape))
        let message: WireMessage
        switch shape % 6 {
        case 0: message = .error(.init(code: KontoErrorCode(rawValue: text), message: text, isRetryable: shape & 8 != 0, details: Array(text.utf8)))
        case 1: message = .response(.init(payload: ByteBuffer(string: text)))
        case 2: message = .event(.init(subscriptionID: id, topic: text, payload: ByteBuffer(string: text)))
        case 3: message = .goaway(.init(lastCorrelationID: id, reason: text))
        case 4: message = .welcome(.init(version: shape & 1 == 0 ? WireProtocolVersion.current : 1, serverName: text, methods: [text], maxInFlight: 1, maxFrameLength: 1, mac: Array(text.utf8.prefix(32))))
        default: message = .hello(.challenge(.init(nonce: Self.nonce, supportedVersions: Array(text.utf8.prefix(255)))))
        }
        self.transmitToMachine(WireFrame(correlationID: id, message: message))
    }

    /// A pending id chosen by `selector`, or `other` when nothing is pending.
    private func pick(_ selector: UInt8, other: UInt64) -> UInt64 {
        let ids = self.pending.keys.sorted()
        return ids.isEmpty ? other : ids[Int(selector) % ids.count]
    }

    /// A caller's request, refused as WireClient refuses it before it reaches the connection.
    private mutating func send(_ request: WireRequest) {
        do {
            try WireClient.checkHeaders(method: request.method, requestID: request.requestID, traceParent: request.traceParent)
            try WireClient.checkFrameLength(request, maxFrameLength: Self.maxFrameLength)
        } catch {
            return
        }
        let promise = self.ledger.make()
        let (action, id) = self.machine.sendRequest(request, promise: promise)
        switch action {
        case .write(let frame):
            precondition(!self.closed, "a closed connection wrote a request")
            precondition(id != 0 && self.pending[id] == nil && frame.correlationID == id, "request written under a bad correlation id \(id)")
            guard case .request(let written) = frame.message, written == request else {
                fatalError("the written request is not the one sent")
            }
            self.pending[id] = promise
            self.emit(frame)
            precondition(FrameRoundTrip.length(frame) <= Self.maxFrameLength, "the client wrote a request over the server's frame limit")
        case .fail(let failed, let error):
            precondition(failed.futureResult === promise.futureResult && id == 0, "sendRequest failed another promise")
            self.ledger.fail(failed, error)
        default:
            fatalError("sendRequest may only write or fail")
        }
    }

    /// Sends a server frame through the codec and the decoder to the machine.
    private mutating func transmitToMachine(_ frame: WireFrame) {
        do {
            self.receive(try FrameRoundTrip.transmit(frame, maximumLength: Self.maxFrameLength))
        } catch {
            self.perform(self.machine.errorCaught(error))
            self.disconnect()
        }
    }

    private mutating func receive(_ frame: WireFrame) {
        if case .hello(.challenge(let challenge)) = frame.message {
            self.challengeNonce = challenge.nonce
            self.challengeVersions = challenge.supportedVersions
        }
        let action = self.machine.frameReceived(frame)
        switch action {
        case .succeed(let promise, _), .fail(let promise, _):
            precondition(self.pending[frame.correlationID]?.futureResult === promise.futureResult,
                         "an answer completed a request with another correlation id")
        case .goingAway(let failing, _):
            guard case .goaway(let goaway) = frame.message else { fatalError("goingAway without a goaway frame") }
            for promise in failing {
                let id = self.pending.first { $0.value.futureResult === promise.futureResult }?.key
                precondition(id.map { $0 > goaway.lastCorrelationID } == true, "goaway failed a request it promised to answer")
            }
        default:
            break
        }
        self.perform(action)
    }

    private mutating func connect(handshake: Bool) {
        self.machine = ClientConnectionStateMachine(configuration: Self.configuration, nonce: Self.clientNonce)
        self.pending = [:]
        self.closed = false
        self.challengeNonce = nil
        guard handshake else { return }
        self.receive(WireFrame(correlationID: 0, message: .hello(.challenge(.init(nonce: Self.nonce)))))
        let action = self.machine.frameReceived(Self.welcome(version: WireProtocolVersion.current, serverName: "fuzz-server"))
        guard case .handshakeCompleted = action else { fatalError("a valid welcome did not complete the handshake") }
    }

    /// The client's nonce, fixed so the harness can prove the server's side of the handshake.
    static let clientNonce = [UInt8](repeating: 0x5C, count: WireHello.Challenge.nonceSize)

    /// A welcome with the server's proof for the handshake the harness drives (challenge `nonce`, default versions).
    static func welcome(version: UInt8, serverName: String) -> WireFrame {
        let transcript = WireHandshake.Transcript(
            serverNonce: Self.nonce, serverVersions: WireProtocolVersion.supported, serviceName: Self.serviceName,
            clientVersions: Self.configuration.supportedVersions, clientNonce: Self.clientNonce
        )
        return WireFrame(correlationID: 0, message: .welcome(.init(
            version: version,
            serverName: serverName,
            methods: ["echo", "profile.load"],
            maxInFlight: 128,
            maxFrameLength: UInt32(Self.maxFrameLength),
            mac: WireHandshake.serverProof(key: Self.secret.proofKey(caller: Self.serviceName, server: "fuzz-server"), transcript: transcript, version: version, serverName: serverName)
        )))
    }

    /// Carries out an action as ClientConnectionHandler does.
    private mutating func perform(_ action: ClientConnectionStateMachine.Action) {
        switch action {
        case .none, .handshakeCompleted:
            break
        case .write(let frame):
            self.emit(frame)
        case .succeed(let promise, let response):
            self.settle(promise)
            self.ledger.succeed(promise, response)
        case .fail(let promise, let error):
            self.settle(promise)
            self.ledger.fail(promise, error)
        case .goingAway(let failing, let close):
            for promise in failing {
                self.settle(promise)
                self.ledger.fail(promise, .shuttingDown)
            }
            precondition(close == self.pending.isEmpty, "goaway closes exactly when nothing is left (the harness opens no subscriptions)")
            if close { self.disconnect() }
        case .deliver, .endSubscription:
            // The harness opens no subscriptions, so no event or end may reach a consumer.
            preconditionFailure("a subscription action without subscriptions")
        case .closeAndFail(let promises, let error, let subscriptions):
            precondition(subscriptions.isEmpty, "closeAndFail ended subscriptions nobody opened")
            for promise in promises {
                self.settle(promise)
                self.ledger.fail(promise, error)
            }
            precondition(self.pending.isEmpty, "closeAndFail left requests pending")
            self.closed = true
            self.disconnect()
        }
    }

    /// Takes a promise the machine handed back off the model's pending list.
    private mutating func settle(_ promise: EventLoopPromise<WireResponse>) {
        guard let id = self.pending.first(where: { $0.value.futureResult === promise.futureResult })?.key else {
            fatalError("the machine completed a promise that was not pending")
        }
        self.pending[id] = nil
    }

    private func emit(_ frame: WireFrame) {
        if case .hello(.clientHello(let hello)) = frame.message {
            guard let challenge = self.challengeNonce,
                  WireHandshake.isValidClientProof(hello.mac, key: Self.secret.proofKey(caller: hello.serviceName, server: "fuzz-server"), transcript: .init(
                      serverNonce: challenge, serverVersions: self.challengeVersions, serviceName: hello.serviceName,
                      clientVersions: hello.supportedVersions, clientNonce: hello.nonce
                  )),
                  hello.serviceName == Self.serviceName
            else {
                fatalError("the client's hello does not prove the secret for the challenge")
            }
        }
        FrameRoundTrip.encode(frame)
    }

    /// The channel goes away: the machine fails whatever is left.
    private mutating func disconnect() {
        let action = self.machine.channelInactive()
        self.closed = true
        self.perform(action)
        precondition(self.pending.isEmpty, "channelInactive left requests pending")
    }
}

extension ClientConnectionStateMachine.Action {
    var isNone: Bool {
        if case .none = self { return true }
        return false
    }
}

struct FuzzChannelError: Error {}
