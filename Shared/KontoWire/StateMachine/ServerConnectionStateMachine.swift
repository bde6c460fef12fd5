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
        /// The callers' verifiers (``WireVerifiers``): a hello is proven under its caller's.
        public var verifiers: WireVerifiers
        public var maxInFlight: Int
        public var maxFrameLength: Int
        public var supportedVersions: [UInt8]
        /// Methods that open a subscription (a subset of `methods`): called with a credit header, never without.
        public var subscriptionMethods: Set<String>
        /// Subscriptions open at once on one connection; one more is refused `wire.overloaded`.
        public var maxSubscriptions: Int
        /// The most credit one subscription gets; a larger grant is lowered to it.
        public var maxCredit: Int
        /// Which peer may call which method; a call outside it is answered `wire.forbidden`.
        public var authorization: WireAuthorization

        public init(
            serverName: String,
            methods: [String],
            verifiers: WireVerifiers,
            maxInFlight: Int,
            maxFrameLength: Int = WireFrame.defaultMaximumLength,
            supportedVersions: [UInt8] = WireProtocolVersion.supported,
            subscriptionMethods: Set<String> = [],
            maxSubscriptions: Int = WireLimits.defaultMaximumSubscriptions,
            maxCredit: Int = WireLimits.defaultMaximumCredit,
            authorization: WireAuthorization = .allowingEveryone
        ) {
            self.serverName = serverName
            self.methods = methods
            self.verifiers = verifiers
            self.maxInFlight = maxInFlight
            self.maxFrameLength = maxFrameLength
            self.supportedVersions = supportedVersions
            self.subscriptionMethods = subscriptionMethods
            self.maxSubscriptions = maxSubscriptions
            self.maxCredit = maxCredit
            self.authorization = authorization
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
        /// Open a subscription: start its handler, which may have `credit` events unacknowledged at once.
        case subscribe(correlationID: UInt64, request: WireRequest, credit: Int)
        /// The client acknowledged (or negatively) a delivery of the subscription.
        case delivered(subscriptionID: UInt64, deliveryID: UInt64, disposition: WireAck.Disposition)
        /// The client cancelled this request or subscription: stop its handler; its answer is not written.
        case cancel(correlationID: UInt64)
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
    /// The methods the authenticated peer may call, from the allow-list at the handshake.
    private var permitted: Set<String> = []
    private(set) var state: State = .initial
    /// Correlation ids accepted and not yet answered. The value is true once the deadline has
    /// passed and an error was already sent; the slot stays taken until the handler finishes,
    /// so a runaway handler still counts against the limit.
    private var inFlight: [UInt64: Bool] = [:]
    /// The channel's `read()` is withheld; input arriving meanwhile means the peer has left (``peerLeft()``).
    private var readHeld = false
    /// The channel is inactive (``channelInactive()``), not just closing.
    private var inactive = false
    /// False while the channel holds more unwritten bytes than its high water mark (a peer that stopped reading
    /// its answers): reads are held until it drains, so the peer's next requests wait in TCP, not in memory here.
    private var writable = true
    private var lastCorrelationID: UInt64 = 0

    /// A subscription's unacknowledged deliveries, never more than its credit.
    struct Subscription: Sendable {
        var credit: Int
        var outstanding: Set<UInt64> = []
        /// Cancelled by the client: nothing more is sent, and the id stays taken until the handler returns.
        var cancelled = false
    }

    /// Open subscriptions by the correlation id of the request that opened them.
    private var subscriptions: [UInt64: Subscription] = [:]
    /// Unacknowledged deliveries: delivery id to subscription id.
    private var deliveries: [UInt64: UInt64] = [:]
    /// Delivery ids are the server's own numbering, per connection, from 1.
    private var nextDeliveryID: UInt64 = 1

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.methods = Set(configuration.methods)
    }

    public var inFlightCount: Int { self.inFlight.count }
    /// Closed or closing: nothing more is read, started or written for the peer.
    public var isClosed: Bool {
        if case .closed = self.state { return true }
        return false
    }
    /// The channel is inactive and every handler the connection started has returned: nothing is held for the peer
    /// any more. Until then a handler that ignores cancellation holds memory for it.
    public var isSettled: Bool {
        self.inactive && self.inFlight.isEmpty && self.subscriptions.isEmpty
    }
    /// The channel's last `read()` is held: the in-flight limit is reached or the channel is not writable.
    public var isReadHeld: Bool { self.readHeld }
    public var subscriptionCount: Int { self.subscriptions.count }
    /// Goaway sent: accepted work finishes, nothing new starts.
    public var isDraining: Bool {
        if case .draining = self.state { return true }
        return false
    }
    /// The open subscriptions, which a graceful shutdown ends.
    public var subscriptionIDs: [UInt64] { Array(self.subscriptions.keys) }
    /// Deliveries sent and not yet acknowledged, over every subscription.
    public var outstandingDeliveries: Int { self.deliveries.count }
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
        if self.readHeld, !self.isClosed {
            return self.peerLeft()
        }
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
            let transcript = WireHandshake.Transcript(
                serverNonce: nonce,
                serverVersions: self.configuration.supportedVersions,
                serviceName: hello.serviceName,
                clientVersions: hello.supportedVersions,
                clientNonce: hello.nonce
            )
            // Every candidate is tried (one, or two while the caller's key is rotated), each in constant time.
            var proven: WireSecret?
            for candidate in self.configuration.verifiers.candidates(caller: hello.serviceName, server: self.configuration.serverName) {
                if WireHandshake.isValidClientProof(hello.mac, key: candidate, transcript: transcript), proven == nil { proven = candidate }
            }
            guard let key = proven else {
                return self.fail(.authenticationFailed)
            }
            self.state = .ready(peer: hello.serviceName, version: version)
            self.permitted = self.configuration.authorization.permittedMethods(for: hello.serviceName, among: self.methods)
            let welcome = WireWelcome(
                version: version,
                serverName: self.configuration.serverName,
                methods: self.configuration.methods,
                maxInFlight: UInt32(clamping: self.configuration.maxInFlight),
                maxFrameLength: UInt32(clamping: self.configuration.maxFrameLength),
                mac: WireHandshake.serverProof(key: key, transcript: transcript, version: version, serverName: self.configuration.serverName)
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
            guard id != 0, self.inFlight[id] == nil, self.subscriptions[id] == nil else {
                return self.fail(.protocolViolation("correlation id \(id) is zero or already in flight"))
            }
            guard self.methods.contains(request.method) else {
                return .write(Self.errorFrame(.unknownMethod(request.method), id: id, version: version))
            }
            guard self.permitted.contains(request.method) else {
                return .write(Self.errorFrame(.forbidden(peer: self.peerServiceName ?? "", method: request.method), id: id, version: version))
            }
            let opensSubscription = self.configuration.subscriptionMethods.contains(request.method)
            guard (request.credit != nil) == opensSubscription else {
                let problem = opensSubscription
                    ? "\(request.method) opens a subscription and needs a credit header"
                    : "\(request.method) is not a subscription; a credit header is not allowed"
                return .write(Self.errorFrame(.protocolViolation(problem), id: id, version: version))
            }
            if let credit = request.credit {
                guard credit > 0 else {
                    return .write(Self.errorFrame(.protocolViolation("a subscription needs a credit of at least 1"), id: id, version: version))
                }
                guard self.subscriptions.count < self.configuration.maxSubscriptions else {
                    return .write(Self.errorFrame(.overloaded, id: id, version: version))
                }
                let granted = min(Int(credit), self.configuration.maxCredit)
                self.subscriptions[id] = Subscription(credit: granted)
                self.lastCorrelationID = max(self.lastCorrelationID, id)
                return .subscribe(correlationID: id, request: request, credit: granted)
            }
            guard self.inFlight.count < self.configuration.maxInFlight else {
                return .write(Self.errorFrame(.overloaded, id: id, version: version))
            }
            self.inFlight[id] = false
            self.lastCorrelationID = max(self.lastCorrelationID, id)
            return .forward(correlationID: id, request: request)
        case .ping:
            return .write(WireFrame(version: version, correlationID: id, message: .pong(.init())))
        case .ack(let ack):
            // An ack for no outstanding delivery (a duplicate, or one of a subscription that has ended) gives no
            // credit and is otherwise ignored: acks of an ended subscription can be on their way legitimately.
            guard let subscriptionID = self.deliveries.removeValue(forKey: id) else { return .none }
            self.subscriptions[subscriptionID]?.outstanding.remove(id)
            return .delivered(subscriptionID: subscriptionID, deliveryID: id, disposition: ack.disposition)
        case .error:
            // Id 0: the client reports a problem with the connection and is going away.
            guard id != 0 else {
                self.state = .closed
                return .close
            }
            return self.cancel(id)
        case .pong, .goaway:
            return .none
        case .hello, .welcome, .response, .event:
            return self.fail(.protocolViolation("unexpected \(frame.kind) frame from a client"))
        }
    }

    /// The client gave up on request or subscription `id`.
    private mutating func cancel(_ id: UInt64) -> Action {
        if var subscription = self.subscriptions[id] {
            guard !subscription.cancelled else { return .none }
            for delivery in subscription.outstanding {
                self.deliveries[delivery] = nil
            }
            subscription.outstanding.removeAll()
            subscription.cancelled = true
            self.subscriptions[id] = subscription
            return .cancel(correlationID: id)
        }
        if self.inFlight[id] == false {
            // Answered as far as the client is concerned; the slot frees when the handler returns.
            self.inFlight[id] = true
            return .cancel(correlationID: id)
        }
        return .none
    }

    /// What pushing one event on a subscription comes to.
    public enum Push: Sendable, Equatable {
        /// Write this event frame; its delivery id is its correlation id.
        case write(WireFrame)
        /// The subscription has as many deliveries unacknowledged as its credit.
        case noCredit
        /// The subscription is over (ended, cancelled, or the connection is closing).
        case ended
    }

    /// The subscription's handler has an event for the client.
    public mutating func push(subscriptionID: UInt64, topic: String, payload: ByteBuffer) -> Push {
        guard let version = self.version, case .ready = self.state else { return .ended }
        guard var subscription = self.subscriptions[subscriptionID], !subscription.cancelled else { return .ended }
        guard subscription.outstanding.count < subscription.credit else { return .noCredit }
        let delivery = self.nextDeliveryID
        self.nextDeliveryID &+= 1
        subscription.outstanding.insert(delivery)
        self.subscriptions[subscriptionID] = subscription
        self.deliveries[delivery] = subscriptionID
        let event = WireEvent(subscriptionID: subscriptionID, topic: topic, payload: payload)
        return .write(WireFrame(version: version, correlationID: delivery, message: .event(event)))
    }

    /// The subscription's handler returned or failed, and its last frame (response or error) is being written.
    /// Returns whether to write it (not after the client cancelled) and what to do next.
    public mutating func subscriptionEnded(correlationID: UInt64) -> (write: Bool, then: Action) {
        guard let subscription = self.subscriptions.removeValue(forKey: correlationID) else {
            return (false, self.afterSlotFreed())
        }
        for delivery in subscription.outstanding {
            self.deliveries[delivery] = nil
        }
        return (!subscription.cancelled, self.afterSlotFreed())
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
        switch self.state {
        case .closed:
            return .none
        case .draining where self.inFlight.isEmpty && self.subscriptions.isEmpty:
            self.state = .closed
            return .close
        default:
            return self.releaseHeldRead()
        }
    }

    /// A frame came in while the channel's read was held. A live peer's input waits in TCP then; NIO reads past a
    /// held read only to drain a socket the peer has reset or shut down, whose close follows in the same tick. So
    /// the peer has left: what it left unread is neither started nor answered (refusals and pongs for a whole
    /// receive buffer would pile up unread), and the connection closes.
    private mutating func peerLeft() -> Action {
        self.state = .closed
        return .close
    }

    /// The held `read()`, once neither the in-flight limit nor an unwritable channel holds it.
    private mutating func releaseHeldRead() -> Action {
        if self.readHeld, self.writable, self.inFlight.count < self.configuration.maxInFlight {
            self.readHeld = false
            return .read
        }
        return .none
    }

    /// The channel wants to read more. Held while the in-flight limit is reached or while answers already
    /// written are not being drained: backpressure reaches the peer through TCP instead of queueing requests,
    /// or their answers, here.
    public mutating func readRequested() -> Action {
        if self.isClosed { return .none }
        if self.inFlight.count >= self.configuration.maxInFlight || !self.writable {
            self.readHeld = true
            return .none
        }
        return .read
    }

    /// The channel's writability changed (its unwritten bytes crossed the high or low water mark).
    /// Requests already accepted still finish and are written; only new reads wait for writability.
    public mutating func writabilityChanged(isWritable: Bool) -> Action {
        self.writable = isWritable
        return self.releaseHeldRead()
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
            if self.inFlight.isEmpty, self.subscriptions.isEmpty {
                self.state = .closed
                return .writeAndClose(goaway)
            }
            // Subscriptions never finish by themselves: the handler ends them (``subscriptionIDs``), and each
            // one's last frame tells its client to subscribe again elsewhere.
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
            // A long-running request, or a subscription waiting for events, is not idleness.
            guard self.inFlight.isEmpty, self.subscriptions.isEmpty else { return .none }
            self.state = .closed
            return .close
        case .initial, .awaitingHello:
            self.state = .closed
            return .close
        case .closed:
            return .none
        }
    }

    /// The decoder refused the input (a ``WireError``), or the connection failed under the protocol.
    public mutating func errorCaught(_ error: any Error) -> Action {
        if case .closed = self.state { return .none }
        guard let wireError = error as? WireError else {
            // Not the peer's input but its connection failing (a reset, a broken TLS session): an error frame would
            // not reach it, so close without one.
            self.state = .closed
            return .close
        }
        return self.fail(wireError)
    }

    /// The channel closed, however the peer left, and the handler cancels every running handler. Nobody reads
    /// answers now: each request counts as answered and each subscription as cancelled, so no late answer or last
    /// frame is written; each keeps its slot until its handler returns, as after a deadline.
    public mutating func channelInactive() {
        guard !self.inactive else { return }
        self.inactive = true
        self.state = .closed
        self.inFlight = self.inFlight.mapValues { _ in true }
        for id in self.subscriptions.keys {
            self.subscriptions[id]?.cancelled = true
            self.subscriptions[id]?.outstanding.removeAll()
        }
        self.deliveries.removeAll()
        self.readHeld = false
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

extension ServerConnectionStateMachine.Configuration {
    /// Accepting every caller whose verifier `secret` derives (``WireVerifiers/init(_:)``; development and tests).
    public init(
        serverName: String,
        methods: [String],
        secret: WireSecret,
        maxInFlight: Int,
        maxFrameLength: Int = WireFrame.defaultMaximumLength,
        supportedVersions: [UInt8] = WireProtocolVersion.supported,
        subscriptionMethods: Set<String> = [],
        maxSubscriptions: Int = WireLimits.defaultMaximumSubscriptions,
        maxCredit: Int = WireLimits.defaultMaximumCredit,
        authorization: WireAuthorization = .allowingEveryone
    ) {
        self.init(
            serverName: serverName, methods: methods, verifiers: WireVerifiers(secret), maxInFlight: maxInFlight,
            maxFrameLength: maxFrameLength, supportedVersions: supportedVersions, subscriptionMethods: subscriptionMethods,
            maxSubscriptions: maxSubscriptions, maxCredit: maxCredit, authorization: authorization
        )
    }
}
