import NIOCore

/// What a client connection does with each event, decided without doing any I/O.
///
/// Holds the promises of pending requests keyed by correlation id, so responses can come back in
/// any order.
public struct ClientConnectionStateMachine {
    public struct Configuration: Sendable {
        public var serviceName: String
        /// The server called, whose verifier of this caller proves the handshake.
        public var serverName: String
        public var secret: WireSecret
        public var supportedVersions: [UInt8]

        public init(serviceName: String, serverName: String, secret: WireSecret, supportedVersions: [UInt8] = WireProtocolVersion.supported) {
            self.serviceName = serviceName
            self.serverName = serverName
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
        /// Close the channel and fail everything pending with `error`, subscriptions included.
        case closeAndFail([EventLoopPromise<WireResponse>], WireError, subscriptions: [WireDeliverySink] = [])
        /// An event of an open subscription, for its consumer.
        case deliver(WireDeliverySink, WireRawDelivery)
        /// The server ended the subscription: finish its stream, with the error if it sent one.
        case endSubscription(WireDeliverySink, WireError?)
    }

    /// Where a subscription's events go: its consumer's stream.
    public typealias WireDeliverySink = AsyncThrowingStream<WireRawDelivery, any Error>.Continuation

    struct Subscription {
        var credit: Int
        /// Deliveries received and not acknowledged yet; the server may never have more than `credit`.
        var unacknowledged: Set<UInt64> = []
        var sink: WireDeliverySink
    }

    enum State {
        case awaitingChallenge
        /// The hello is sent; the welcome must prove the caller's key over this transcript.
        case awaitingWelcome(WireHandshake.Transcript)
        case ready(version: UInt8)
        case goingAway(version: UInt8)
        case closed(WireError)
    }

    private let configuration: Configuration
    /// This connection's nonce, which the server's proof must cover.
    private let nonce: [UInt8]
    private(set) var state: State = .awaitingChallenge
    private var pending: [UInt64: EventLoopPromise<WireResponse>] = [:]
    private var subscriptions: [UInt64: Subscription] = [:]
    private var nextCorrelationID: UInt64 = 1
    private var pingOutstanding = false

    /// - Parameter nonce: this connection's fresh random nonce (tests give their own).
    public init(configuration: Configuration, nonce: [UInt8] = WireHandshake.makeNonce()) {
        self.configuration = configuration
        self.nonce = nonce
    }

    public var pendingCount: Int { self.pending.count }
    public var subscriptionCount: Int { self.subscriptions.count }

    public mutating func frameReceived(_ frame: WireFrame) -> Action {
        switch self.state {
        case .awaitingChallenge:
            switch frame.message {
            case .hello(.challenge(let challenge)):
                let transcript = WireHandshake.Transcript(
                    serverNonce: challenge.nonce,
                    serverVersions: challenge.supportedVersions,
                    serviceName: self.configuration.serviceName,
                    clientVersions: self.configuration.supportedVersions,
                    clientNonce: self.nonce
                )
                self.state = .awaitingWelcome(transcript)
                let key = self.configuration.secret.proofKey(caller: self.configuration.serviceName, server: self.configuration.serverName)
                let hello = WireHello.ClientHello(
                    serviceName: self.configuration.serviceName,
                    supportedVersions: self.configuration.supportedVersions,
                    mac: WireHandshake.clientProof(key: key, transcript: transcript),
                    nonce: self.nonce
                )
                return .write(WireFrame(correlationID: 0, message: .hello(.clientHello(hello))))
            case .error(let body):
                return self.closeAndFail(body.wireError)
            default:
                return self.closeAndFail(.protocolViolation("expected a challenge, got \(frame.kind)"))
            }
        case .awaitingWelcome(let transcript):
            switch frame.message {
            case .welcome(let welcome):
                guard self.configuration.supportedVersions.contains(welcome.version), transcript.serverVersions.contains(welcome.version) else {
                    return self.closeAndFail(.unsupportedVersion(welcome.version))
                }
                // The server proves it knows this caller's key, over both nonces: a fake server or a relay stops here.
                let key = self.configuration.secret.proofKey(caller: self.configuration.serviceName, server: self.configuration.serverName)
                guard welcome.serverName == self.configuration.serverName,
                      WireHandshake.isValidServerProof(welcome.mac, key: key, transcript: transcript, version: welcome.version, serverName: welcome.serverName) else {
                    return self.closeAndFail(.serverAuthenticationFailed)
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
            if let subscription = self.subscriptions.removeValue(forKey: id) {
                return .endSubscription(subscription.sink, nil)
            }
            guard let promise = self.pending.removeValue(forKey: id) else { return .none }
            return .succeed(promise, response)
        case .error(let body):
            if id == 0 {
                return self.closeAndFail(body.wireError)
            }
            if let subscription = self.subscriptions.removeValue(forKey: id) {
                return .endSubscription(subscription.sink, body.wireError)
            }
            guard let promise = self.pending.removeValue(forKey: id) else { return .none }
            return .fail(promise, body.wireError)
        case .event(let event):
            // Events of a subscription this side cancelled may still arrive: dropped, never buffered.
            guard var subscription = self.subscriptions[event.subscriptionID] else { return .none }
            guard id != 0, !subscription.unacknowledged.contains(id) else {
                return self.closeAndFail(.protocolViolation("event delivery id \(id) is zero or already unacknowledged"))
            }
            // The credit is what this side can buffer: a server sending more is broken or hostile.
            guard subscription.unacknowledged.count < subscription.credit else {
                return self.closeAndFail(.protocolViolation("server sent more events than the subscription's credit"))
            }
            subscription.unacknowledged.insert(id)
            self.subscriptions[event.subscriptionID] = subscription
            let delivery = WireRawDelivery(subscriptionID: event.subscriptionID, deliveryID: id, topic: event.topic, payload: event.payload)
            return .deliver(subscription.sink, delivery)
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
            // Subscriptions end with their own last frame (the server sends wire.shuttingDown), so they keep it open too.
            return .goingAway(failing: failing, close: self.pending.isEmpty && self.subscriptions.isEmpty)
        case .ack:
            // Only clients acknowledge.
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

    /// A caller opens a subscription (`request` carries its credit).
    public mutating func openSubscription(_ request: WireRequest, sink: WireDeliverySink) -> (Action, correlationID: UInt64) {
        switch self.state {
        case .ready(let version):
            let id = self.nextCorrelationID
            self.nextCorrelationID &+= 1
            self.subscriptions[id] = Subscription(credit: Int(request.credit ?? 0), sink: sink)
            return (.write(WireFrame(version: version, correlationID: id, message: .request(request))), id)
        case .goingAway:
            return (.endSubscription(sink, .shuttingDown), 0)
        case .closed(let error):
            return (.endSubscription(sink, error), 0)
        case .awaitingChallenge, .awaitingWelcome:
            return (.endSubscription(sink, .serviceUnavailable("connection is not ready")), 0)
        }
    }

    /// The consumer's outcome for a delivery; written only for a delivery still unacknowledged.
    public mutating func acknowledge(subscriptionID: UInt64, deliveryID: UInt64, disposition: WireAck.Disposition) -> Action {
        guard let version = self.version, self.subscriptions[subscriptionID]?.unacknowledged.remove(deliveryID) != nil else {
            return .none
        }
        return .write(WireFrame(version: version, correlationID: deliveryID, message: .ack(WireAck(disposition))))
    }

    /// The consumer stops: the server is told (`wire.cancelled`) and the stream finishes.
    public mutating func cancelSubscription(_ id: UInt64) -> Action {
        guard let version = self.version, self.subscriptions.removeValue(forKey: id) != nil else { return .none }
        return .write(WireFrame(version: version, correlationID: id, message: .error(WireErrorBody(.cancelled))))
    }

    private var version: UInt8? {
        switch self.state {
        case .ready(let version), .goingAway(let version): version
        default: nil
        }
    }

    /// Whether a goaway'd connection has nothing left and can close.
    public var isDrained: Bool {
        if case .goingAway = self.state { return self.pending.isEmpty && self.subscriptions.isEmpty }
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
            return self.pending.isEmpty && self.subscriptions.isEmpty ? .none : self.closeAndFail(.connectionClosed)
        }
        return self.closeAndFail(.connectionClosed)
    }

    private mutating func closeAndFail(_ error: WireError) -> Action {
        self.state = .closed(error)
        let promises = Array(self.pending.values)
        self.pending.removeAll()
        let sinks = self.subscriptions.values.map(\.sink)
        self.subscriptions.removeAll()
        return .closeAndFail(promises, error, subscriptions: sinks)
    }
}
