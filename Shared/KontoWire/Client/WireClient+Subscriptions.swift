import NIOCore

extension WireClient {
    /// Opens a subscription on one of the pool's connections (docs/PROTOCOL.md, "Subscriptions").
    ///
    /// The server has at most `credit` events unacknowledged on it (less if its own maximum is lower), so that many
    /// are buffered here at most. The subscription ends when the server ends it (the stream finishes, or throws the
    /// server's error: `wire.shuttingDown` after goaway), when its connection closes (`wire.connectionClosed`), or
    /// when the consumer cancels it. Events not acknowledged by then are the server's to deliver again.
    public func subscribe<Request, Event>(
        _ method: WireSubscriptionMethod<Request, Event>,
        _ request: Request,
        credit: Int,
        requestID: String? = nil,
        traceParent: String? = nil
    ) async throws -> WireClientSubscription<Event> {
        let payload = try WirePayloadCodec.encode(request)
        let raw = try await self.subscribeRaw(method.name, payload: payload, credit: credit, requestID: requestID, traceParent: traceParent)
        return WireClientSubscription(raw: raw)
    }

    /// Opens a subscription with a raw payload; events arrive undecoded.
    public func subscribeRaw(
        _ method: String,
        payload: ByteBuffer,
        credit: Int,
        requestID: String? = nil,
        traceParent: String? = nil
    ) async throws -> WireRawSubscription {
        try Self.checkHeaders(method: method, requestID: requestID, traceParent: traceParent)
        guard credit >= 1 else { throw WireError.invalidRequest("a subscription needs a credit of at least 1") }
        try Task.checkCancellation()
        let connection = try await self.acquire(deadline: .now() + self.configuration.requestTimeout)
        defer { self.release(connection) }
        let request = WireRequest(
            method: method,
            requestID: requestID,
            traceParent: traceParent,
            credit: UInt32(clamping: credit),
            payload: payload
        )
        try Self.checkFrameLength(request, maxFrameLength: connection.maxFrameLength)
        let (stream, sink) = AsyncThrowingStream<WireRawDelivery, any Error>.makeStream()
        let channel = connection.channel
        let opened = channel.eventLoop.makePromise(of: UInt64.self)
        channel.writeAndFlush(ClientCommand.subscribe(request, sink: sink, opened: opened)).whenFailure { _ in
            // The channel closed before the handler saw the request; a second completion is ignored.
            opened.fail(WireError.connectionClosed)
            sink.finish(throwing: WireError.connectionClosed)
        }
        let id = try await opened.futureResult.get()
        sink.onTermination = { termination in
            // The consumer went away without cancelling (its task was cancelled, or it dropped the stream).
            if case .cancelled = termination {
                channel.writeAndFlush(ClientCommand.cancelSubscription(id), promise: nil)
            }
        }
        return WireRawSubscription(id: id, channel: channel, stream: stream, sink: sink)
    }
}

/// An open subscription's undecoded events, in the order the server sent them. Read by one task.
public struct WireRawSubscription: AsyncSequence, Sendable {
    public typealias Element = WireRawDelivery

    /// The correlation id of the request that opened it.
    public let id: UInt64
    private let channel: any Channel
    private let stream: AsyncThrowingStream<WireRawDelivery, any Error>
    private let sink: AsyncThrowingStream<WireRawDelivery, any Error>.Continuation

    init(id: UInt64, channel: any Channel, stream: AsyncThrowingStream<WireRawDelivery, any Error>, sink: AsyncThrowingStream<WireRawDelivery, any Error>.Continuation) {
        self.id = id
        self.channel = channel
        self.stream = stream
        self.sink = sink
    }

    public func makeAsyncIterator() -> AsyncThrowingStream<WireRawDelivery, any Error>.AsyncIterator {
        self.stream.makeAsyncIterator()
    }

    /// Tells the server the delivery's outcome, which also gives it one credit back. Sent at most once per delivery;
    /// after the subscription or its connection ended it is dropped (the server delivers the event again).
    public func acknowledge(_ delivery: WireRawDelivery, _ disposition: WireAck.Disposition = .processed) {
        self.acknowledge(deliveryID: delivery.deliveryID, disposition)
    }

    public func acknowledge(deliveryID: UInt64, _ disposition: WireAck.Disposition = .processed) {
        let command = ClientCommand.acknowledge(subscriptionID: self.id, deliveryID: deliveryID, disposition: disposition)
        self.channel.writeAndFlush(command, promise: nil)
    }

    /// Ends the subscription: the server stops sending and delivers the unacknowledged events again; the
    /// stream finishes.
    public func cancel() {
        self.channel.writeAndFlush(ClientCommand.cancelSubscription(self.id), promise: nil)
        self.sink.finish()
    }
}

/// One decoded event of a subscription.
public struct WireDelivery<Event: Sendable>: Sendable {
    public var deliveryID: UInt64
    public var topic: String
    public var event: Event
}

/// An open subscription's events decoded as `Event`. An event that does not decode is rejected (a poison event,
/// not to be tried again) and skipped.
public struct WireClientSubscription<Event: Decodable & Sendable>: AsyncSequence, Sendable {
    public typealias Element = WireDelivery<Event>
    public let raw: WireRawSubscription

    public func makeAsyncIterator() -> Iterator {
        Iterator(raw: self.raw, base: self.raw.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        let raw: WireRawSubscription
        var base: AsyncThrowingStream<WireRawDelivery, any Error>.AsyncIterator

        public mutating func next() async throws -> WireDelivery<Event>? {
            while let delivery = try await self.base.next() {
                do {
                    let event = try WirePayloadCodec.decode(Event.self, from: delivery.payload)
                    return WireDelivery(deliveryID: delivery.deliveryID, topic: delivery.topic, event: event)
                } catch {
                    self.raw.acknowledge(delivery, .reject(reason: "the event does not decode as \(Event.self)"))
                }
            }
            return nil
        }
    }

    public func acknowledge(_ delivery: WireDelivery<Event>, _ disposition: WireAck.Disposition = .processed) {
        self.raw.acknowledge(deliveryID: delivery.deliveryID, disposition)
    }

    public func cancel() {
        self.raw.cancel()
    }
}
