import NIOCore

/// What a client connection does with each event, decided without doing any I/O.
///
/// Holds the promises of pending requests keyed by correlation id, so responses can come back in
/// any order.
public struct ClientConnectionStateMachine {
    public struct Configuration: Sendable {
        public var serviceName: String
        public var secret: WireSecret
        public var supportedVersions: [UInt8]

        public init(serviceName: String, secret: WireSecret, supportedVersions: [UInt8] = WireProtocolVersion.supported) {
            self.serviceName = serviceName
            self.secret = secret
            self.supportedVersions = supportedVersions
        }
    }

    public enum Action {
        case none
        case write(WireFrame)
        case handshakeCompleted(WireWelcome)
        case succeed(EventLoopPromise<WireResponse>, WireResponse)
        case fail(EventLoopPromise<WireResponse>, WireError)
        /// The server sent goaway: stop using this connection; fail what it will not answer.
        case goingAway(failing: [EventLoopPromise<WireResponse>], close: Bool)
        /// Close the channel and fail everything pending with `error`.
        case closeAndFail([EventLoopPromise<WireResponse>], WireError)
    }

    enum State {
        case awaitingChallenge
        case awaitingWelcome
        case ready(version: UInt8)
        case goingAway(version: UInt8)
        case closed(WireError)
    }

    private let configuration: Configuration
    private(set) var state: State = .awaitingChallenge
    private var pending: [UInt64: EventLoopPromise<WireResponse>] = [:]
    private var nextCorrelationID: UInt64 = 1
    private var pingOutstanding = false

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    public var pendingCount: Int { self.pending.count }

    public mutating func frameReceived(_ frame: WireFrame) -> Action {
        switch self.state {
        case .awaitingChallenge:
            switch frame.message {
            case .hello(.challenge(let challenge)):
                self.state = .awaitingWelcome
                let mac = WireHandshake.mac(
                    secret: self.configuration.secret,
                    nonce: challenge.nonce,
                    serviceName: self.configuration.serviceName
                )
                let hello = WireHello.ClientHello(
                    serviceName: self.configuration.serviceName,
                    supportedVersions: self.configuration.supportedVersions,
                    mac: mac
                )
                return .write(WireFrame(correlationID: 0, message: .hello(.clientHello(hello))))
            case .error(let body):
                return self.closeAndFail(body.wireError)
            default:
                return self.closeAndFail(.protocolViolation("expected a challenge, got \(frame.kind)"))
            }
        case .awaitingWelcome:
            switch frame.message {
            case .welcome(let welcome):
                guard self.configuration.supportedVersions.contains(welcome.version) else {
                    return self.closeAndFail(.unsupportedVersion(welcome.version))
                }
                self.state = .ready(version: welcome.version)
                return .handshakeCompleted(welcome)
            case .error(let body):
                return self.closeAndFail(body.wireError)
            default:
                return self.closeAndFail(.protocolViolation("expected welcome, got \(frame.kind)"))
            }
        case .ready(let version), .goingAway(let version):
            return self.established(frame, version: version)
        case .closed:
            return .none
        }
    }

    private mutating func established(_ frame: WireFrame, version: UInt8) -> Action {
        let id = frame.correlationID
        switch frame.message {
        case .response(let response):
            guard let promise = self.pending.removeValue(forKey: id) else { return .none }
            return .succeed(promise, response)
        case .error(let body):
            if id == 0 {
                return self.closeAndFail(body.wireError)
            }
            guard let promise = self.pending.removeValue(forKey: id) else { return .none }
            return .fail(promise, body.wireError)
        case .ping:
            return .write(WireFrame(version: version, correlationID: id, message: .pong(.init())))
        case .pong:
            self.pingOutstanding = false
            return .none
        case .goaway(let goaway):
            self.state = .goingAway(version: version)
            var failing: [EventLoopPromise<WireResponse>] = []
            for (pendingID, promise) in self.pending where pendingID > goaway.lastCorrelationID {
                self.pending[pendingID] = nil
                failing.append(promise)
            }
            return .goingAway(failing: failing, close: self.pending.isEmpty)
        case .event, .ack:
            // Subscriptions are not part of the request/response client; ignore rather than fail.
            return .none
        case .hello, .welcome, .request:
            return self.closeAndFail(.protocolViolation("unexpected \(frame.kind) frame from a server"))
        }
    }

    /// A caller wants to send a request.
    public mutating func sendRequest(_ request: WireRequest, promise: EventLoopPromise<WireResponse>) -> (Action, correlationID: UInt64) {
        switch self.state {
        case .ready(let version):
            let id = self.nextCorrelationID
            self.nextCorrelationID &+= 1
            self.pending[id] = promise
            return (.write(WireFrame(version: version, correlationID: id, message: .request(request))), id)
        case .goingAway:
            return (.fail(promise, .shuttingDown), 0)
        case .closed(let error):
            return (.fail(promise, error), 0)
        case .awaitingChallenge, .awaitingWelcome:
            return (.fail(promise, .serviceUnavailable("connection is not ready")), 0)
        }
    }

    /// Whether a goaway'd connection has nothing left and can close.
    public var isDrained: Bool {
        if case .goingAway = self.state { return self.pending.isEmpty }
        return false
    }

    public mutating func requestTimedOut(correlationID: UInt64) -> Action {
        guard let promise = self.pending.removeValue(forKey: correlationID) else { return .none }
        return .fail(promise, .timeout)
    }

    /// Nothing was read for a heartbeat interval: ping, or give up if the last ping went unanswered.
    public mutating func heartbeatDue() -> Action {
        switch self.state {
        case .ready(let version), .goingAway(let version):
            if self.pingOutstanding {
                return self.closeAndFail(.serviceUnavailable("peer did not answer a heartbeat"))
            }
            self.pingOutstanding = true
            return .write(WireFrame(version: version, correlationID: 0, message: .ping(.init())))
        case .awaitingChallenge, .awaitingWelcome:
            return self.closeAndFail(.serviceUnavailable("handshake timed out"))
        case .closed:
            return .none
        }
    }

    public mutating func errorCaught(_ error: any Error) -> Action {
        if case .closed = self.state { return .none }
        return self.closeAndFail(error as? WireError ?? .connectionClosed)
    }

    public mutating func channelInactive() -> Action {
        if case .closed = self.state {
            return self.pending.isEmpty ? .none : self.closeAndFail(.connectionClosed)
        }
        return self.closeAndFail(.connectionClosed)
    }

    private mutating func closeAndFail(_ error: WireError) -> Action {
        self.state = .closed(error)
        let promises = Array(self.pending.values)
        self.pending.removeAll()
        return .closeAndFail(promises, error)
    }
}
