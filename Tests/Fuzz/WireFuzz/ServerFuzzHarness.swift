import KontoWire
import KontoWireFuzzSupport
import Logging
import NIOCore

/// Drives ``ServerConnectionStateMachine`` the way ServerConnectionHandler does, with the fuzz
/// input as the client and a simulated application answering forwarded requests.
///
/// The application's answers are framed by `WireServer.answerFrame`, as the server's dispatch frames
/// them. Every frame the server writes is encoded and decoded back and must fit the frame limit.
/// Crashes, hangs, failed round trips and broken invariants (checked with `precondition`) are findings.
struct ServerFuzzHarness {
    static let secret = WireSecret("konto-fuzz-secret")
    /// The handshake needs a known nonce to compute the client's MAC; production draws a random one.
    static let nonce: [UInt8] = (0..<UInt8(WireHello.Challenge.nonceSize)).map { $0 &* 7 &+ 3 }
    static let peer = "fuzz-client"
    static let methods = ["echo", "profile.load", "m"]
    static let maxInFlight = 3
    /// Smaller than the 1 MiB default to keep inputs short, but a 65,536+ byte field still fits.
    static let maxFrameLength = 1 << 17
    static let logger = Logger(label: "konto.fuzz", factory: { _ in SwiftLogNoOpLogHandler() })
    static let configuration = ServerConnectionStateMachine.Configuration(
        serverName: "fuzz-server",
        methods: methods,
        secret: secret,
        maxInFlight: maxInFlight,
        maxFrameLength: maxFrameLength
    )

    private var machine = ServerConnectionStateMachine(configuration: Self.configuration)
    /// Forwarded and not yet answered, in arrival order.
    private var forwarded: [(id: UInt64, request: WireRequest)] = []
    /// Forwarded requests whose deadline already sent `wire.deadlineExceeded`.
    private var expired: Set<UInt64> = []
    /// The channel is closed: the machine was told channelInactive.
    private var closed = false

    static func run(_ bytes: UnsafeRawBufferPointer) {
        var harness = ServerFuzzHarness()
        var input = FuzzInput(bytes)
        harness.connect(handshake: true)
        harness.drive(&input)
    }

    private mutating func drive(_ input: inout FuzzInput) {
        while true {
            switch input.nextStep() {
            case .end:
                self.close()
                return
            case .frame:
                let frame: WireFrame?
                do {
                    frame = try input.decodeFrame(maximumLength: Self.maxFrameLength)
                } catch {
                    // The decoder fires errorCaught; the rest of the stream is unreadable.
                    self.perform(self.machine.errorCaught(error))
                    self.close()
                    return
                }
                guard let frame else {
                    // EOF inside a frame: decodeLast's error, then the close.
                    self.perform(self.machine.errorCaught(WireError.malformedFrame("connection ended inside a frame")))
                    self.close()
                    return
                }
                // What the decoder accepts must encode back to the same frame.
                FrameRoundTrip.encode(frame)
                self.receive(frame)
            case .control(let byte):
                self.control(ServerFuzzStep(control: byte), &input)
            }
            precondition(self.machine.inFlightCount == self.forwarded.count, "in-flight count disagrees with the model")
        }
    }

    private mutating func control(_ step: ServerFuzzStep, _ input: inout FuzzInput) {
        switch step {
        case .answerEcho:
            guard let (id, request) = self.takeForwarded(input.byte()) else { return }
            var payload = ByteBuffer(string: request.method)
            payload.writeImmutableBuffer(request.payload)
            self.answer(id, .success(payload))
        case .answerErrorQuotingMethod:
            guard let (id, request) = self.takeForwarded(input.byte()) else { return }
            self.answer(id, .failure(WireError.unknownMethod(request.method)))
        case .answerErrorQuotingPayload:
            guard let (id, request) = self.takeForwarded(input.byte()) else { return }
            // A handler rejecting bad input: quotes it as text and returns it as details.
            let text = String(decoding: request.payload.readableBytesView, as: UTF8.self)
            self.answer(id, .failure(WireError(
                code: WireError.Code.badPayload,
                message: "cannot decode '\(text)'",
                details: Array(request.payload.readableBytesView)
            )))
        case .answerOther:
            guard let (id, request) = self.takeForwarded(input.byte()) else { return }
            let kind = input.byte()
            var doubled = request.payload
            doubled.writeImmutableBuffer(request.payload)
            let outcome: Result<ByteBuffer, any Error> = switch kind % 4 {
            // Twice the request's payload: can be over the frame limit.
            case 0: .success(doubled)
            case 1: .failure(FuzzApplicationError(
                code: "app." + request.method,
                message: String(decoding: doubled.readableBytesView, as: UTF8.self),
                isRetryable: kind & 0x10 != 0,
                details: Array(doubled.readableBytesView)
            ))
            case 2: .failure(CancellationError())
            default: .failure(FuzzChannelError())
            }
            self.answer(id, outcome)
        case .deadlineExpired:
            let pick = input.byte()
            let other = UInt64(input.byte())
            let id = self.forwarded.isEmpty ? other : self.forwarded[Int(pick) % self.forwarded.count].id
            let action = self.machine.deadlineExpired(correlationID: id)
            if case .write(let frame) = action {
                precondition(self.forwarded.contains { $0.id == id } && !self.expired.contains(id) && !self.closed,
                             "deadline answered a request that is not waiting")
                precondition(frame.correlationID == id)
                self.expired.insert(id)
            } else {
                precondition(action == .none, "deadlineExpired may only write")
            }
            self.perform(action)
        case .answerUnknownID:
            let id = UInt64(input.byte()) << 32 | 0xF0F0
            guard !self.forwarded.contains(where: { $0.id == id }) else { return }
            let (write, then) = self.machine.answerWritten(correlationID: id)
            precondition(!write && then == .none, "an answer for an unknown id was accepted")
        case .readRequested:
            let action = self.machine.readRequested()
            precondition(action == .read || (action == .none && (self.closed || self.forwarded.count >= Self.maxInFlight)),
                         "read held below the in-flight limit")
            self.perform(action)
        case .gracefulShutdown:
            self.perform(self.machine.gracefulShutdown())
        case .idleTimeout:
            let action = self.machine.idleTimeout()
            if !self.forwarded.isEmpty, !self.closed {
                precondition(action == .none, "idle timeout closed a connection with requests in flight")
            }
            self.perform(action)
        case .bigFrame:
            self.receiveBigFrame(&input)
        case .newConnection:
            self.close()
            self.connect(handshake: true)
        case .newConnectionAwaitingHello:
            self.close()
            self.connect(handshake: false)
        case .validHello:
            let name = input.shortString()
            self.transmitToMachine(Self.hello(serviceName: name))
        case .channelInactive:
            self.close()
        case .errorCaught:
            let error: any Error = switch input.byte() % 3 {
            case 0: WireError.frameTooLarge(Self.maxFrameLength + 1, max: Self.maxFrameLength)
            case 1: WireError.malformedFrame("fuzz")
            default: FuzzChannelError()
            }
            self.perform(self.machine.errorCaught(error))
        }
    }

    /// A client frame with one oversized field. Fields are capped at the format's limit, since
    /// that is all a peer can send.
    private mutating func receiveBigFrame(_ input: inout FuzzInput) {
        let shape = input.byte()
        let length = min(input.uint24(), Int(UInt16.max))
        let text = input.longString(byteCount: length)
        let id = UInt64(input.byte())
        let message: WireMessage
        switch shape % 8 {
        case 0:
            message = .request(.init(method: text.isEmpty ? "x" : text, payload: ByteBuffer()))
        case 1:
            let method = Self.methods[Int(shape / 8) % Self.methods.count]
            message = .request(.init(method: method, payload: ByteBuffer(repeating: shape, count: input.uint24() % Self.maxFrameLength)))
        case 2:
            message = .request(.init(method: "echo", timeoutMilliseconds: UInt32(shape), requestID: text, traceParent: text, payload: ByteBuffer(string: text)))
        case 3:
            message = .hello(.clientHello(WireHandshake.clientHello(answering: .init(nonce: Self.nonce), serviceName: text, serverName: "fuzz-server", secret: Self.secret)))
        case 4:
            message = .event(.init(subscriptionID: UInt64(shape), topic: text, payload: ByteBuffer(string: text)))
        case 5:
            message = .error(.init(code: KontoErrorCode(rawValue: text), message: text, isRetryable: shape & 1 == 1))
        case 6:
            message = .goaway(.init(lastCorrelationID: id, reason: text))
        default:
            message = .response(.init(payload: ByteBuffer(string: text)))
        }
        self.transmitToMachine(WireFrame(correlationID: id, message: message))
    }

    /// Sends a client frame through the codec and the decoder to the machine.
    private mutating func transmitToMachine(_ frame: WireFrame) {
        do {
            self.receive(try FrameRoundTrip.transmit(frame, maximumLength: Self.maxFrameLength))
        } catch {
            self.perform(self.machine.errorCaught(error))
            self.close()
        }
    }

    private mutating func receive(_ frame: WireFrame) {
        let action = self.machine.frameReceived(frame)
        if self.closed {
            precondition(action == .none, "a closed connection acted on a frame")
        }
        self.perform(action)
    }

    private mutating func connect(handshake: Bool) {
        self.machine = ServerConnectionStateMachine(configuration: Self.configuration)
        self.forwarded = []
        self.expired = []
        self.closed = false
        let challenge = self.machine.channelActive(nonce: Self.nonce)
        guard case .write(let frame) = challenge, case .hello(.challenge(let body)) = frame.message, body.nonce == Self.nonce else {
            fatalError("channelActive did not send the challenge")
        }
        self.perform(challenge)
        precondition(self.machine.channelActive(nonce: Self.nonce) == .none, "a second channelActive challenged again")
        guard handshake else { return }
        let hello = Self.hello(serviceName: Self.peer)
        let welcome = self.machine.frameReceived(hello)
        guard case .write(let reply) = welcome, case .welcome = reply.message,
              self.machine.peerServiceName == Self.peer
        else {
            fatalError("a valid hello was not welcomed: \(welcome)")
        }
        self.perform(welcome)
    }

    static func hello(serviceName: String) -> WireFrame {
        WireFrame(correlationID: 0, message: .hello(.clientHello(WireHandshake.clientHello(answering: .init(nonce: Self.nonce), serviceName: serviceName, serverName: "fuzz-server", secret: Self.secret))))
    }

    /// Carries out an action as ServerConnectionHandler does.
    private mutating func perform(_ action: ServerConnectionStateMachine.Action) {
        switch action {
        case .none, .read:
            break
        case .write(let frame):
            self.emit(frame)
        case .writeAndClose(let frame):
            self.emit(frame)
            self.close()
        case .forward(let id, let request):
            precondition(!self.closed, "a closed connection forwarded a request")
            precondition(id != 0 && !self.forwarded.contains { $0.id == id }, "forwarded correlation id \(id) twice")
            precondition(Self.methods.contains(request.method), "forwarded an unknown method")
            self.forwarded.append((id, request))
            precondition(self.forwarded.count <= Self.maxInFlight, "forwarded past the in-flight limit")
        case .cancel(let id):
            // The client cancelled a request: its answer must not be written, as after a deadline.
            precondition(self.forwarded.contains { $0.id == id } && !self.expired.contains(id), "cancelled a request that is not in flight")
            self.expired.insert(id)
        case .subscribe, .delivered:
            preconditionFailure("subscriptions on a server that serves none")
        case .close:
            self.close()
        }
    }

    /// Every frame the server writes must fit the limit it announced: a client closes the whole
    /// connection on a bigger one, failing every request sharing it.
    private func emit(_ frame: WireFrame, allowingClamps: Bool = false) {
        let bytes = FrameRoundTrip.encode(frame, allowingClamps: allowingClamps)
        precondition(bytes.readableBytes - WireFrame.lengthFieldSize <= Self.maxFrameLength,
                     "the server wrote a \(frame.kind) frame over the frame limit")
    }

    private mutating func takeForwarded(_ pick: UInt8) -> (UInt64, WireRequest)? {
        guard !self.forwarded.isEmpty else { return nil }
        let taken = self.forwarded.remove(at: Int(pick) % self.forwarded.count)
        return (taken.id, taken.request)
    }

    /// The application's outcome for `id`, framed as the server's dispatch frames it; checked whether
    /// or not it is written (a deadline may have answered already).
    private mutating func answer(_ id: UInt64, _ outcome: Result<ByteBuffer, any Error>) {
        let frame = WireServer.answerFrame(id: id, outcome: outcome, maxFrameLength: Self.maxFrameLength, logger: Self.logger)
        precondition(frame.correlationID == id, "an answer went out under another correlation id")
        Self.checkAnswer(frame, for: outcome)
        let (write, then) = self.machine.answerWritten(correlationID: id)
        // Once the channel is inactive nobody reads answers: none is written.
        precondition(write == (!self.closed && !self.expired.contains(id)), "answerWritten disagrees about the deadline or the close")
        self.expired.remove(id)
        // Outside data (a message quoting a payload) may be cut at the field limits.
        self.emit(frame, allowingClamps: true)
        self.perform(then)
    }

    /// The answer says what the outcome was: the payload itself, or the error's code and details
    /// (dropped only when the frame would otherwise be over the limit).
    private static func checkAnswer(_ frame: WireFrame, for outcome: Result<ByteBuffer, any Error>) {
        let expected: WireErrorBody
        switch outcome {
        case .success(let payload):
            if case .response(let response) = frame.message {
                precondition(response.payload == payload, "a response changed the handler's payload")
                return
            }
            expected = WireErrorBody(.frameTooLarge(payload.readableBytes + WireFrame.headerSize, max: Self.maxFrameLength))
        case .failure(let error as WireError):
            expected = WireErrorBody(error)
        case .failure(let error as FuzzApplicationError):
            expected = WireErrorBody(code: KontoErrorCode(rawValue: error.code), message: error.message, isRetryable: error.isRetryable, details: error.details)
        case .failure(is CancellationError):
            expected = WireErrorBody(.shuttingDown)
        case .failure:
            expected = WireErrorBody(code: WireError.Code.internalError, message: "internal error", isRetryable: false)
        }
        guard case .error(let body) = frame.message else { fatalError("an error outcome was answered with a \(frame.kind) frame") }
        precondition(body.code == expected.code && body.message == expected.message && body.isRetryable == expected.isRetryable,
                     "an error answer does not carry the handler's error")
        if body.details != expected.details {
            let whole = WireFrame(correlationID: frame.correlationID, message: .error(expected))
            precondition(body.details.isEmpty && FrameRoundTrip.length(whole) > Self.maxFrameLength,
                         "error details were dropped although they fit")
        }
    }

    /// The channel closes: the machine hears channelInactive and every running handler is
    /// cancelled, answering `wire.shuttingDown` (WireServer.dispatch's CancellationError path), which is not written.
    private mutating func close() {
        guard !self.closed else { return }
        self.closed = true
        self.machine.channelInactive()
        while let (id, _) = self.takeForwarded(0) {
            self.answer(id, .failure(CancellationError()))
        }
    }
}

struct FuzzChannelError: Error {}

/// An application error with its own code, as a service's handlers throw.
struct FuzzApplicationError: WireErrorConvertible {
    var code: String
    var message: String
    var isRetryable: Bool
    var details: [UInt8]

    var wireErrorCode: KontoErrorCode { KontoErrorCode(rawValue: self.code) }
    var wireErrorMessage: String { self.message }
    var wireErrorIsRetryable: Bool { self.isRetryable }
    var wireErrorDetails: [UInt8] { self.details }
}
