import NIOCore

/// What a server connection does with each event, decided without doing any I/O.
///
/// The handler feeds events in and carries out the returned action, so every protocol rule
/// (handshake first, in-flight limit, goaway, deadlines) lives here and is testable without a
/// channel.
public struct ServerConnectionStateMachine: Sendable {
    public struct Configuration: Sendable {
        public var serverName: String
        public var methods: [String]
        public var secret: WireSecret
        public var maxInFlight: Int
        public var maxFrameLength: Int
        public var supportedVersions: [UInt8]

        public init(
            serverName: String,
            methods: [String],
            secret: WireSecret,
            maxInFlight: Int,
            maxFrameLength: Int = WireFrame.defaultMaximumLength,
            supportedVersions: [UInt8] = WireProtocolVersion.supported
        ) {
            self.serverName = serverName
            self.methods = methods
            self.secret = secret
            self.maxInFlight = maxInFlight
            self.maxFrameLength = maxFrameLength
            self.supportedVersions = supportedVersions
        }
    }

    public enum Action: Sendable, Equatable {
        case none
        /// Write and flush this frame.
        case write(WireFrame)
        /// Write and flush this frame, then close.
        case writeAndClose(WireFrame)
        /// Hand the request to the application.
        case forward(correlationID: UInt64, request: WireRequest)
        /// Pass the held `read()` on to the channel.
        case read
        case close
    }

    enum State: Sendable {
        case initial
        case awaitingHello(nonce: [UInt8])
        case ready(peer: String, version: UInt8)
        /// Goaway sent: finish what was accepted, accept nothing new.
        case draining(peer: String, version: UInt8)
        case closed
    }

    private let configuration: Configuration
    private let methods: Set<String>
    private(set) var state: State = .initial
    /// Correlation ids accepted and not yet answered. The value is true once the deadline has
    /// passed and an error was already sent; the slot stays taken until the handler finishes,
    /// so a runaway handler still counts against the limit.
    private var inFlight: [UInt64: Bool] = [:]
    private var readHeld = false
    private var lastCorrelationID: UInt64 = 0

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.methods = Set(configuration.methods)
    }

    public var inFlightCount: Int { self.inFlight.count }
    public var peerServiceName: String? {
        switch self.state {
        case .ready(let peer, _), .draining(let peer, _): peer
        default: nil
        }
    }

    /// The connection is up: challenge the peer.
    public mutating func channelActive(nonce: [UInt8]) -> Action {
        guard case .initial = self.state else { return .none }
        self.state = .awaitingHello(nonce: nonce)
        let challenge = WireHello.Challenge(nonce: nonce, supportedVersions: self.configuration.supportedVersions)
        return .write(WireFrame(correlationID: 0, message: .hello(.challenge(challenge))))
    }

    /// The connection is up but will not be served (e.g. the server's connection limit): say why and close.
    public mutating func refuse(_ error: WireError) -> Action {
        guard case .initial = self.state else { return .none }
        return self.fail(error)
    }

    public mutating func frameReceived(_ frame: WireFrame) -> Action {
        switch self.state {
        case .initial, .closed:
            return .none
        case .awaitingHello(let nonce):
            guard case .hello(.clientHello(let hello)) = frame.message else {
                return self.fail(.handshakeRequired)
            }
            guard let version = WireHandshake.negotiateVersion(
                client: hello.supportedVersions,
                server: self.configuration.supportedVersions
            ) else {
                return self.fail(WireError(
                    code: WireError.Code.unsupportedVersion,
                    message: "no common protocol version"
                ))
            }
            guard WireHandshake.isValid(
                mac: hello.mac,
                secret: self.configuration.secret,
                nonce: nonce,
                serviceName: hello.serviceName
            ) else {
                return self.fail(.authenticationFailed)
            }
            self.state = .ready(peer: hello.serviceName, version: version)
            let welcome = WireWelcome(
                version: version,
                serverName: self.configuration.serverName,
                methods: self.configuration.methods,
                maxInFlight: UInt32(clamping: self.configuration.maxInFlight),
                maxFrameLength: UInt32(clamping: self.configuration.maxFrameLength)
            )
            return .write(WireFrame(version: version, correlationID: frame.correlationID, message: .welcome(welcome)))
        case .ready(_, let version), .draining(_, let version):
            guard frame.version == version else {
                return self.fail(.protocolViolation("frame version \(frame.version) after negotiating \(version)"))
            }
            return self.established(frame, version: version)
        }
    }

    private mutating func established(_ frame: WireFrame, version: UInt8) -> Action {
        let id = frame.correlationID
        switch frame.message {
        case .request(let request):
            if case .draining = self.state {
                return .write(Self.errorFrame(.shuttingDown, id: id, version: version))
            }
            guard id != 0, self.inFlight[id] == nil else {
                return self.fail(.protocolViolation("correlation id \(id) is zero or already in flight"))
            }
            guard self.methods.contains(request.method) else {
                return .write(Self.errorFrame(.unknownMethod(request.method), id: id, version: version))
            }
            guard self.inFlight.count < self.configuration.maxInFlight else {
                return .write(Self.errorFrame(.overloaded, id: id, version: version))
            }
            self.inFlight[id] = false
            self.lastCorrelationID = max(self.lastCorrelationID, id)
            return .forward(correlationID: id, request: request)
        case .ping:
            return .write(WireFrame(version: version, correlationID: id, message: .pong(.init())))
        case .pong, .ack, .goaway:
            return .none
        case .hello, .welcome, .response, .error, .event:
            return self.fail(.protocolViolation("unexpected \(frame.kind) frame from a client"))
        }
    }

    /// The application's answer (response or error frame) for `correlationID` is being written.
    /// Returns whether to write it (false if the deadline already answered) and what to do next.
    public mutating func answerWritten(correlationID: UInt64) -> (write: Bool, then: Action) {
        guard let expired = self.inFlight.removeValue(forKey: correlationID) else {
            return (false, .none)
        }
        return (!expired, self.afterSlotFreed())
    }

    /// The request's deadline passed before its answer.
    public mutating func deadlineExpired(correlationID: UInt64) -> Action {
        guard self.inFlight[correlationID] == false, let version = self.version else { return .none }
        self.inFlight[correlationID] = true
        return .write(Self.errorFrame(.deadlineExceeded, id: correlationID, version: version))
    }

    private mutating func afterSlotFreed() -> Action {
        if case .draining = self.state, self.inFlight.isEmpty {
            self.state = .closed
            return .close
        }
        if self.readHeld, self.inFlight.count < self.configuration.maxInFlight {
            self.readHeld = false
            return .read
        }
        return .none
    }

    /// The channel wants to read more. Held while the in-flight limit is reached: backpressure
    /// reaches the peer through TCP instead of queueing requests here.
    public mutating func readRequested() -> Action {
        if self.inFlight.count >= self.configuration.maxInFlight {
            self.readHeld = true
            return .none
        }
        return .read
    }

    public mutating func gracefulShutdown() -> Action {
        switch self.state {
        case .ready(let peer, let version):
            self.state = .draining(peer: peer, version: version)
            let goaway = WireFrame(
                version: version,
                correlationID: 0,
                message: .goaway(.init(lastCorrelationID: self.lastCorrelationID, reason: "server shutting down"))
            )
            if self.inFlight.isEmpty {
                self.state = .closed
                return .writeAndClose(goaway)
            }
            return .write(goaway)
        case .initial, .awaitingHello:
            self.state = .closed
            return .close
        case .draining, .closed:
            return .none
        }
    }

    /// Nothing was read for the idle timeout.
    public mutating func idleTimeout() -> Action {
        switch self.state {
        case .ready, .draining:
            // A long-running request is not idleness.
            guard self.inFlight.isEmpty else { return .none }
            self.state = .closed
            return .close
        case .initial, .awaitingHello:
            self.state = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// The decoder refused the input, or another error happened on the channel.
    public mutating func errorCaught(_ error: any Error) -> Action {
        if case .closed = self.state { return .none }
        let wireError = error as? WireError ?? .malformedFrame("unreadable input")
        return self.fail(wireError)
    }

    public mutating func channelInactive() {
        self.state = .closed
    }

    private var version: UInt8? {
        switch self.state {
        case .ready(_, let version), .draining(_, let version): version
        default: nil
        }
    }

    private mutating func fail(_ error: WireError) -> Action {
        let version = self.version ?? WireProtocolVersion.current
        self.state = .closed
        return .writeAndClose(Self.errorFrame(error, id: 0, version: version))
    }

    static func errorFrame(_ error: WireError, id: UInt64, version: UInt8) -> WireFrame {
        WireFrame(version: version, correlationID: id, message: .error(WireErrorBody(error)))
    }
}
