import KontoWire
import NIOCore
import NIOEmbedded
import Testing

/// Subscription rules of both connection state machines (docs/PROTOCOL.md, "Subscriptions"), without a channel.
@Suite("Subscription state machines")
struct SubscriptionStateMachineTests {
    static func server(maxSubscriptions: Int = 2, maxCredit: Int = 8, maxInFlight: Int = 2) -> ServerConnectionStateMachine {
        var machine = ServerConnectionStateMachine(configuration: .init(
            serverName: "s",
            methods: ["m", "events"],
            secret: StateMachineTests.secret,
            maxInFlight: maxInFlight,
            subscriptionMethods: ["events"],
            maxSubscriptions: maxSubscriptions,
            maxCredit: maxCredit
        ))
        _ = machine.channelActive(nonce: StateMachineTests.nonce)
        let hello = WireHandshake.clientHello(answering: .init(nonce: StateMachineTests.nonce), serviceName: "c", serverName: "s", secret: StateMachineTests.secret)
        _ = machine.frameReceived(WireFrame(correlationID: 0, message: .hello(.clientHello(hello))))
        return machine
    }

    static func subscribe(_ id: UInt64, credit: UInt32?, method: String = "events") -> WireFrame {
        WireFrame(correlationID: id, message: .request(.init(method: method, credit: credit, payload: ByteBuffer())))
    }

    static func ack(_ id: UInt64, _ disposition: WireAck.Disposition = .processed) -> WireFrame {
        WireFrame(correlationID: id, message: .ack(.init(disposition)))
    }

    static func errorCode(_ action: ServerConnectionStateMachine.Action, id: UInt64) -> KontoErrorCode? {
        guard case .write(let frame) = action, frame.correlationID == id, case .error(let body) = frame.message else { return nil }
        return body.code
    }

    /// Pushes one event; the delivery id, or nil when nothing was written.
    static func push(_ machine: inout ServerConnectionStateMachine, _ subscription: UInt64) -> UInt64? {
        guard case .write(let frame) = machine.push(subscriptionID: subscription, topic: "t", payload: ByteBuffer(string: "{}")),
              case .event(let event) = frame.message, event.subscriptionID == subscription
        else { return nil }
        return frame.correlationID
    }

    @Test("a subscription gets at most its credit unacknowledged; every ack or nack gives one back")
    func credit() {
        var machine = Self.server()
        #expect(machine.frameReceived(Self.subscribe(1, credit: 2)) == .subscribe(correlationID: 1, request: .init(method: "events", credit: 2, payload: ByteBuffer()), credit: 2))
        #expect(Self.push(&machine, 1) == 1)
        #expect(Self.push(&machine, 1) == 2)
        #expect(machine.push(subscriptionID: 1, topic: "t", payload: ByteBuffer()) == .noCredit)
        #expect(machine.frameReceived(Self.ack(2, .retry(reason: "later"))) == .delivered(subscriptionID: 1, deliveryID: 2, disposition: .retry(reason: "later")))
        #expect(Self.push(&machine, 1) == 3)
        #expect(machine.push(subscriptionID: 1, topic: "t", payload: ByteBuffer()) == .noCredit)
        #expect(machine.frameReceived(Self.ack(1)) == .delivered(subscriptionID: 1, deliveryID: 1, disposition: .processed))
        #expect(machine.outstandingDeliveries == 1)
        // A subscription does not take a request slot.
        #expect(machine.inFlightCount == 0)
    }

    @Test("acks for unknown or already acknowledged deliveries are ignored and give no credit")
    func unknownAcks() {
        var machine = Self.server()
        _ = machine.frameReceived(Self.subscribe(1, credit: 1))
        #expect(Self.push(&machine, 1) == 1)
        #expect(machine.frameReceived(Self.ack(99)) == .none)
        #expect(machine.frameReceived(Self.ack(0)) == .none)
        #expect(machine.push(subscriptionID: 1, topic: "t", payload: ByteBuffer()) == .noCredit)
        #expect(machine.frameReceived(Self.ack(1)) == .delivered(subscriptionID: 1, deliveryID: 1, disposition: .processed))
        #expect(machine.frameReceived(Self.ack(1)) == .none)
        #expect(Self.push(&machine, 1) == 2)
        #expect(machine.push(subscriptionID: 1, topic: "t", payload: ByteBuffer()) == .noCredit)
    }

    @Test("a credit above the server's maximum is lowered to it")
    func creditClamped() {
        var machine = Self.server(maxCredit: 3)
        #expect(machine.frameReceived(Self.subscribe(1, credit: .max)) == .subscribe(correlationID: 1, request: .init(method: "events", credit: .max, payload: ByteBuffer()), credit: 3))
        for expected in UInt64(1)...3 {
            #expect(Self.push(&machine, 1) == expected)
        }
        #expect(machine.push(subscriptionID: 1, topic: "t", payload: ByteBuffer()) == .noCredit)
    }

    @Test("credit on a plain method, none on a subscription method, or zero: refused on that request only")
    func creditMismatch() {
        var machine = Self.server()
        #expect(Self.errorCode(machine.frameReceived(Self.subscribe(1, credit: 4, method: "m")), id: 1) == WireError.Code.protocolViolation)
        #expect(Self.errorCode(machine.frameReceived(Self.subscribe(2, credit: nil)), id: 2) == WireError.Code.protocolViolation)
        #expect(Self.errorCode(machine.frameReceived(Self.subscribe(3, credit: 0)), id: 3) == WireError.Code.protocolViolation)
        #expect(machine.subscriptionCount == 0 && machine.inFlightCount == 0)
        // The connection still serves.
        #expect(machine.frameReceived(StateMachineTests.request(4)) == .forward(correlationID: 4, request: .init(method: "m", payload: ByteBuffer())))
    }

    @Test("subscriptions over the connection's limit are refused wire.overloaded; an open one's id is taken")
    func subscriptionLimit() {
        var machine = Self.server(maxSubscriptions: 1)
        _ = machine.frameReceived(Self.subscribe(1, credit: 1))
        #expect(Self.errorCode(machine.frameReceived(Self.subscribe(2, credit: 1)), id: 2) == WireError.Code.overloaded)
        // Reusing the open subscription's id for a request is a protocol violation.
        guard case .writeAndClose(let frame) = machine.frameReceived(StateMachineTests.request(1)), case .error(let body) = frame.message else {
            Issue.record("a reused id was accepted")
            return
        }
        #expect(body.code == WireError.Code.protocolViolation)
    }

    @Test("a client's error frame cancels its subscription: nothing more is sent, its acks are void, its last frame is not written")
    func cancelSubscription() {
        var machine = Self.server()
        _ = machine.frameReceived(Self.subscribe(1, credit: 2))
        #expect(Self.push(&machine, 1) == 1)
        let cancel = WireFrame(correlationID: 1, message: .error(.init(WireError.cancelled)))
        #expect(machine.frameReceived(cancel) == .cancel(correlationID: 1))
        #expect(machine.frameReceived(cancel) == .none)
        #expect(machine.push(subscriptionID: 1, topic: "t", payload: ByteBuffer()) == .ended)
        #expect(machine.frameReceived(Self.ack(1)) == .none)
        // The id stays taken until the handler has returned.
        #expect(machine.subscriptionCount == 1)
        #expect(machine.subscriptionEnded(correlationID: 1).write == false)
        #expect(machine.subscriptionCount == 0)
    }

    @Test("a client's error frame cancels an in-flight request: its answer is not written, its slot frees when the handler returns")
    func cancelRequest() {
        var machine = Self.server(maxInFlight: 1)
        _ = machine.frameReceived(StateMachineTests.request(5))
        #expect(machine.frameReceived(WireFrame(correlationID: 5, message: .error(.init(WireError.cancelled)))) == .cancel(correlationID: 5))
        #expect(machine.inFlightCount == 1)
        #expect(machine.answerWritten(correlationID: 5).write == false)
        #expect(machine.inFlightCount == 0)
        // An error for nothing in flight is ignored; id 0 means the client is leaving.
        #expect(machine.frameReceived(WireFrame(correlationID: 77, message: .error(.init(WireError.cancelled)))) == .none)
        #expect(machine.frameReceived(WireFrame(correlationID: 0, message: .error(.init(WireError.timeout)))) == .close)
    }

    @Test("once the channel is inactive, pushes end at once (even after the peer stopped reading) and a subscription's last frame is not written")
    func inactiveWithSubscription() {
        var machine = Self.server()
        _ = machine.frameReceived(Self.subscribe(1, credit: 4))
        #expect(Self.push(&machine, 1) == 1)
        #expect(machine.writabilityChanged(isWritable: false) == .none)
        machine.channelInactive()
        #expect(machine.isClosed)
        #expect(machine.push(subscriptionID: 1, topic: "t", payload: ByteBuffer()) == .ended)
        #expect(machine.outstandingDeliveries == 0)
        #expect(machine.frameReceived(Self.ack(1)) == .none)
        // Its id stays taken until its handler has returned.
        #expect(machine.subscriptionCount == 1)
        let ended = machine.subscriptionEnded(correlationID: 1)
        #expect(!ended.write)
        #expect(ended.then == .none)
        #expect(machine.subscriptionCount == 0)
    }

    @Test("an event from a client is a protocol violation")
    func eventFromClient() {
        var machine = Self.server()
        let action = machine.frameReceived(WireFrame(correlationID: 1, message: .event(.init(subscriptionID: 1, topic: "t", payload: ByteBuffer()))))
        guard case .writeAndClose(let frame) = action, case .error(let body) = frame.message else {
            Issue.record("an event from a client was accepted: \(action)")
            return
        }
        #expect(body.code == WireError.Code.protocolViolation)
    }

    @Test("goaway with a subscription open: no more events, close once its handler has ended")
    func shutdown() {
        var machine = Self.server()
        _ = machine.frameReceived(Self.subscribe(1, credit: 2))
        #expect(Self.push(&machine, 1) == 1)
        guard case .write(let goaway) = machine.gracefulShutdown(), case .goaway = goaway.message else {
            Issue.record("expected goaway without close")
            return
        }
        #expect(machine.subscriptionIDs == [1])
        #expect(machine.push(subscriptionID: 1, topic: "t", payload: ByteBuffer()) == .ended)
        // Acks still arrive while draining.
        #expect(machine.frameReceived(Self.ack(1)) == .delivered(subscriptionID: 1, deliveryID: 1, disposition: .processed))
        // New subscriptions are refused.
        #expect(Self.errorCode(machine.frameReceived(Self.subscribe(3, credit: 1)), id: 3) == WireError.Code.shuttingDown)
        let ended = machine.subscriptionEnded(correlationID: 1)
        #expect(ended.write && ended.then == .close)
    }

    @Test("a connection with a subscription waiting for events is not idle")
    func notIdle() {
        var machine = Self.server()
        _ = machine.frameReceived(Self.subscribe(1, credit: 1))
        #expect(machine.idleTimeout() == .none)
        _ = machine.subscriptionEnded(correlationID: 1)
        #expect(machine.idleTimeout() == .close)
    }

    // MARK: Client

    static func client() -> (ClientConnectionStateMachine, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        return (StateMachineTests.readyClient(loop: loop), loop)
    }

    static func event(_ delivery: UInt64, subscription: UInt64) -> WireFrame {
        WireFrame(correlationID: delivery, message: .event(.init(subscriptionID: subscription, topic: "t", payload: ByteBuffer(string: "{}"))))
    }

    @Test("the client delivers events of its subscription and acks each at most once")
    func clientDelivers() {
        var (machine, _) = Self.client()
        let (stream, sink) = AsyncThrowingStream<WireRawDelivery, any Error>.makeStream()
        _ = stream
        let (open, id) = machine.openSubscription(.init(method: "events", credit: 2, payload: ByteBuffer()), sink: sink)
        guard case .write(let frame) = open, case .request(let request) = frame.message else {
            Issue.record("no subscribe frame")
            return
        }
        #expect(request.credit == 2 && frame.correlationID == id)
        guard case .deliver(_, let delivery) = machine.frameReceived(Self.event(10, subscription: id)) else {
            Issue.record("event not delivered")
            return
        }
        #expect(delivery.deliveryID == 10 && delivery.subscriptionID == id && delivery.topic == "t")
        guard case .write(let ack) = machine.acknowledge(subscriptionID: id, deliveryID: 10, disposition: .reject(reason: "poison")) else {
            Issue.record("ack not written")
            return
        }
        #expect(ack == WireFrame(correlationID: 10, message: .ack(.init(.reject(reason: "poison")))))
        guard case .none = machine.acknowledge(subscriptionID: id, deliveryID: 10, disposition: .processed) else {
            Issue.record("acked twice")
            return
        }
        // Events for a subscription it does not have (e.g. cancelled) are dropped.
        guard case .none = machine.frameReceived(Self.event(11, subscription: id + 100)) else {
            Issue.record("an event of an unknown subscription was delivered")
            return
        }
    }

    @Test("a server sending beyond the credit, or a delivery id twice, is a protocol violation")
    func clientEnforcesCredit() {
        for duplicate in [false, true] {
            var (machine, _) = Self.client()
            let (_, sink) = AsyncThrowingStream<WireRawDelivery, any Error>.makeStream()
            let (_, id) = machine.openSubscription(.init(method: "events", credit: 1, payload: ByteBuffer()), sink: sink)
            _ = machine.frameReceived(Self.event(1, subscription: id))
            let action = machine.frameReceived(Self.event(duplicate ? 1 : 2, subscription: id))
            guard case .closeAndFail(_, let error, let sinks) = action else {
                Issue.record("accepted an event beyond the credit (duplicate: \(duplicate))")
                continue
            }
            #expect(error.code == WireError.Code.protocolViolation)
            #expect(sinks.count == 1)
        }
    }

    @Test("the server's last frame ends the subscription; cancelling sends wire.cancelled")
    func clientEnds() {
        var (machine, _) = Self.client()
        let (_, first) = AsyncThrowingStream<WireRawDelivery, any Error>.makeStream()
        let (_, second) = AsyncThrowingStream<WireRawDelivery, any Error>.makeStream()
        let (_, a) = machine.openSubscription(.init(method: "events", credit: 1, payload: ByteBuffer()), sink: first)
        let (_, b) = machine.openSubscription(.init(method: "events", credit: 1, payload: ByteBuffer()), sink: second)
        guard case .endSubscription(_, let error) = machine.frameReceived(WireFrame(correlationID: a, message: .error(.init(WireError.shuttingDown)))) else {
            Issue.record("the error did not end the subscription")
            return
        }
        #expect(error?.code == WireError.Code.shuttingDown)
        guard case .write(let cancel) = machine.cancelSubscription(b) else {
            Issue.record("no cancel written")
            return
        }
        #expect(cancel == WireFrame(correlationID: b, message: .error(.init(WireError.cancelled))))
        #expect(machine.subscriptionCount == 0)
    }
}
