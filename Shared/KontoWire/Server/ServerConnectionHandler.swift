import Logging
import NIOCore

/// Thin driver of ``ServerConnectionStateMachine``: turns channel events into state machine
/// events and carries out the actions, the last handler of a connection's pipeline.
///
/// Each accepted request runs its method handler in a task of its own and the answer is written
/// from here. Requests do not pass through an NIOAsyncChannel: its stream and writer cost several
/// event loop hops per request, which profiles of the wire benchmark showed as the largest item.
final class ServerConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = WireFrame
    typealias OutboundIn = WireFrame
    typealias OutboundOut = WireFrame

    struct Dispatch: Sendable {
        var handlers: [String: WireServer.Registration]
        var defaultExecution: WireServer.HandlerExecution
        var maxFrameLength: Int
    }

    private var stateMachine: ServerConnectionStateMachine
    private let dispatch: Dispatch
    /// Handlers still running, cancelled when the connection goes away: nobody is left to read
    /// their answers.
    private var running: [UInt64: Task<Void, Never>] = [:]
    /// Requests answered before their task was registered: a handler started immediately may
    /// finish inside ``startHandler(for:context:)``.
    private var answeredWhileStarting: Set<UInt64> = []
    private var starting = false
    private var taskExecutor: EventLoopTaskExecutor?
    /// Deadlines of requests still in flight, swept by one timer set for the earliest; cheaper
    /// than a timer per request, which showed up in profiles of the benchmark.
    private var deadlines: [UInt64: NIODeadline] = [:]
    private var deadlineTimer: (due: NIODeadline, task: Scheduled<Void>)?
    private var started = false
    private var logger: Logger
    /// Open subscriptions' handles, by the correlation id that opened them.
    private var subscriptions: [UInt64: WireSubscription] = [:]
    /// Events waiting for the channel to become writable again (a peer that stopped reading): credit bounds how
    /// many events a subscription has out, and this bounds how many bytes sit in the channel's buffer for them.
    private var unwritableEvents: [(subscriptionID: UInt64, topic: String, payload: ByteBuffer, promise: EventLoopPromise<UInt64>)] = []

    /// Request frames read on this connection, for ``load(channel:)``.
    private var requestsReceived = 0

    /// False when the server is at its connection limit: the connection is refused instead of challenged.
    private let admitted: Bool
    /// Called once the connection has settled (``ServerConnectionStateMachine/isSettled``): until every handler it
    /// started has returned they hold memory for it, so it keeps its place in the server's connection limit.
    private var settled: (@Sendable () -> Void)?

    init(
        configuration: ServerConnectionStateMachine.Configuration,
        dispatch: Dispatch,
        admitted: Bool = true,
        logger: Logger,
        settled: (@Sendable () -> Void)? = nil
    ) {
        self.stateMachine = ServerConnectionStateMachine(configuration: configuration)
        self.dispatch = dispatch
        self.admitted = admitted
        self.logger = logger
        self.settled = settled
    }

    /// The channel's close future completed: after channelInactive, or instead of it for a channel that never
    /// became active. On the event loop.
    func channelClosed() {
        self.stateMachine.channelInactive()
        self.settleIfDone()
    }

    private func settleIfDone() {
        guard self.stateMachine.isSettled, let settled = self.settled else { return }
        self.settled = nil
        settled()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive {
            self.start(context: context)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard !self.started else { return }
        self.started = true
        if let peer = context.remoteAddress {
            self.logger[metadataKey: "konto.peer"] = "\(peer)"
        }
        guard self.admitted else {
            // Debug, not warning: a connection flood must not become a log flood.
            self.logger.debug("Refusing wire connection over the connection limit")
            self.run(self.stateMachine.refuse(.tooManyConnections), context: context)
            return
        }
        self.run(self.stateMachine.channelActive(nonce: WireHandshake.makeNonce()), context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        if case .request = frame.message {
            self.requestsReceived += 1
        }
        self.run(self.stateMachine.frameReceived(frame), context: context)
    }

    func read(context: ChannelHandlerContext) {
        self.run(self.stateMachine.readRequested(), context: context)
    }

    /// The method handler's answer (response or error frame) for one request.
    private func answer(_ frame: WireFrame, context: ChannelHandlerContext) {
        let id = frame.correlationID
        if self.running.removeValue(forKey: id) == nil, self.starting {
            self.answeredWhileStarting.insert(id)
        }
        self.deadlines.removeValue(forKey: id)
        let (shouldWrite, next) = self.stateMachine.answerWritten(correlationID: id)
        self.writeLast(frame, shouldWrite: shouldWrite, then: next, context: context)
        self.settleIfDone()
    }

    /// Writes a request's or subscription's last frame (unless the state machine dropped it), then does what the
    /// freed slot calls for. The last frame of a drain must reach the peer before the close.
    private func writeLast(_ frame: WireFrame, shouldWrite: Bool, then next: ServerConnectionStateMachine.Action, context: ChannelHandlerContext) {
        if case .close = next {
            let channel = context.channel
            if shouldWrite {
                context.writeAndFlush(Self.wrapOutboundOut(frame)).whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
            return
        }
        if shouldWrite {
            context.writeAndFlush(Self.wrapOutboundOut(frame), promise: nil)
        }
        self.run(next, context: context)
    }

    /// Runs the method handler in a task of its own (on this connection's event loop or the
    /// global executor) and writes its answer back on the event loop.
    ///
    /// On the event loop the task starts immediately, in this call, and runs until its first
    /// await: a request costs no extra trip through the loop's queue, and every request read in one
    /// loop tick has reached its first await (e.g. queued its database read, see `EventLoopBatchedLookup`)
    /// before the loop runs its queued work.
    private func startHandler(for request: WireServerRequest, context: ChannelHandlerContext) {
        let eventLoop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: eventLoop)
        let dispatch = self.dispatch
        let logger = self.logger
        let operation: @Sendable () async -> Void = {
            let frame = await WireServer.dispatch(
                request,
                handlers: dispatch.handlers,
                maxFrameLength: dispatch.maxFrameLength,
                logger: logger
            )
            if eventLoop.inEventLoop {
                bound.value.handler.answer(frame, context: bound.value.context)
            } else {
                eventLoop.execute { bound.value.handler.answer(frame, context: bound.value.context) }
            }
        }
        let task: Task<Void, Never>
        switch dispatch.handlers[request.request.method]?.execution ?? dispatch.defaultExecution {
        case .globalExecutor:
            task = Task(operation: operation)
        case .eventLoop:
            let executor = self.taskExecutor ?? EventLoopTaskExecutor(eventLoop: eventLoop)
            self.taskExecutor = executor
            self.starting = true
            task = Task.immediate(executorPreference: executor, operation: operation)
            self.starting = false
        }
        if self.answeredWhileStarting.remove(request.correlationID) == nil {
            self.running[request.correlationID] = task
        }
    }

    /// Starts a subscription's handler on the global executor; its last frame is written from here when it ends.
    private func startSubscription(
        for request: WireServerRequest,
        credit: Int,
        handler: @escaping WireServer.RawSubscriptionHandler,
        context: ChannelHandlerContext
    ) {
        let eventLoop = context.eventLoop
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: eventLoop)
        let id = request.correlationID
        let subscription = WireSubscription(id: id, credit: credit) { topic, payload in
            try await eventLoop.flatSubmit {
                bound.value.handler.pushEvent(subscriptionID: id, topic: topic, payload: payload, context: bound.value.context)
            }.get()
        }
        self.subscriptions[id] = subscription
        let maxFrameLength = self.dispatch.maxFrameLength
        let logger = self.logger
        self.running[id] = Task {
            let frame = await WireServer.runSubscription(request, handler: handler, subscription: subscription, maxFrameLength: maxFrameLength, logger: logger)
            eventLoop.execute { bound.value.handler.endSubscription(frame, context: bound.value.context) }
        }
    }

    /// One event of a subscription's handler, written once the channel is writable; its delivery id.
    private func pushEvent(subscriptionID: UInt64, topic: String, payload: ByteBuffer, context: ChannelHandlerContext) -> EventLoopFuture<UInt64> {
        let promise = context.eventLoop.makePromise(of: UInt64.self)
        // A closed channel keeps the writability it had (false, if its peer had stopped reading) and never drains: an
        // event queued then would wait for ever, and its subscription's handler with it. The state machine ends it.
        if self.stateMachine.isClosed || (context.channel.isWritable && self.unwritableEvents.isEmpty) {
            self.writeEvent(subscriptionID: subscriptionID, topic: topic, payload: payload, promise: promise, context: context)
        } else {
            self.unwritableEvents.append((subscriptionID, topic, payload, promise))
        }
        return promise.futureResult
    }

    private func writeEvent(subscriptionID: UInt64, topic: String, payload: ByteBuffer, promise: EventLoopPromise<UInt64>, context: ChannelHandlerContext) {
        switch self.stateMachine.push(subscriptionID: subscriptionID, topic: topic, payload: payload) {
        case .write(let frame):
            context.writeAndFlush(Self.wrapOutboundOut(frame), promise: nil)
            promise.succeed(frame.correlationID)
        case .noCredit:
            // WireSubscription waits for credit before it sends, so this is a defect, not a client's doing.
            promise.fail(WireError(code: WireError.Code.internalError, message: "subscription pushed beyond its credit"))
        case .ended:
            // An event racing the goaway ends its subscription as the shutdown does (retryable, subscribe again).
            promise.fail(self.stateMachine.isDraining ? WireError.shuttingDown : WireError.connectionClosed)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        while context.channel.isWritable, !self.unwritableEvents.isEmpty {
            let event = self.unwritableEvents.removeFirst()
            self.writeEvent(subscriptionID: event.subscriptionID, topic: event.topic, payload: event.payload, promise: event.promise, context: context)
        }
        // Reads wait while the peer is not draining what was written (see the state machine's readRequested).
        self.run(self.stateMachine.writabilityChanged(isWritable: context.channel.isWritable), context: context)
        context.fireChannelWritabilityChanged()
    }

    /// What this connection holds now. On the channel's event loop.
    func load(channel: any Channel) -> WireServer.ConnectionLoad {
        WireServer.ConnectionLoad(
            requestsReceived: self.requestsReceived,
            inFlight: self.stateMachine.inFlightCount,
            isReadHeld: self.stateMachine.isReadHeld,
            isWritable: channel.isWritable,
            bufferedOutboundBytes: (try? channel.syncOptions?.getOption(.bufferedWritableBytes)) ?? 0
        )
    }

    /// A subscription's handler ended: write its last frame unless the client cancelled it.
    private func endSubscription(_ frame: WireFrame, context: ChannelHandlerContext) {
        let id = frame.correlationID
        self.running.removeValue(forKey: id)
        self.subscriptions.removeValue(forKey: id)?.end(.connectionClosed)
        let (shouldWrite, next) = self.stateMachine.subscriptionEnded(correlationID: id)
        self.writeLast(frame, shouldWrite: shouldWrite, then: next, context: context)
        self.settleIfDone()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let idle as IdleStateHandler.IdleStateEvent where idle == .read:
            self.logger.debug("Closing idle wire connection")
            self.run(self.stateMachine.idleTimeout(), context: context)
        case is WireServerShutdownEvent:
            self.run(self.stateMachine.gracefulShutdown(), context: context)
            // Subscriptions never end by themselves: stop their handlers, whose last frame (wire.shuttingDown)
            // tells each client to subscribe again elsewhere.
            for id in self.stateMachine.subscriptionIDs {
                self.subscriptions[id]?.end(.shuttingDown)
                self.running[id]?.cancel()
            }
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Debug: a peer resetting its connection is no news.
        self.logger.debug(error is WireError ? "Refusing wire input" : "Wire connection failed", metadata: ["konto.error": "\(error)"])
        self.run(self.stateMachine.errorCaught(error), context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stateMachine.channelInactive()
        for task in self.running.values {
            task.cancel()
        }
        self.running.removeAll()
        for subscription in self.subscriptions.values {
            subscription.end(.connectionClosed)
        }
        self.subscriptions.removeAll()
        for event in self.unwritableEvents {
            event.promise.fail(WireError.connectionClosed)
        }
        self.unwritableEvents.removeAll()
        self.deadlineTimer?.task.cancel()
        self.deadlineTimer = nil
        self.deadlines.removeAll()
        self.settleIfDone()
        context.fireChannelInactive()
    }

    private func armDeadlineTimer(at due: NIODeadline, context: ChannelHandlerContext) {
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: due) {
            self.deadlineTimer = nil
            let now = NIODeadline.now()
            var next: NIODeadline?
            for (id, due) in self.deadlines {
                if due <= now {
                    self.deadlines[id] = nil
                    self.run(self.stateMachine.deadlineExpired(correlationID: id), context: context)
                    // The caller has its answer (wire.deadlineExceeded) and stops waiting, so the handler stops too,
                    // as a gRPC handler's context ends at its deadline; its slot frees once it returns.
                    self.running[id]?.cancel()
                } else if next == nil || due < next! {
                    next = due
                }
            }
            if let next, self.deadlineTimer == nil {
                self.armDeadlineTimer(at: next, context: context)
            }
        }
        self.deadlineTimer = (due, task)
    }

    private func run(_ action: ServerConnectionStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .write(let frame):
            context.writeAndFlush(Self.wrapOutboundOut(frame), promise: nil)
        case .writeAndClose(let frame):
            if case .error(let body) = frame.message {
                self.logger.info("Closing wire connection after error", metadata: ["konto.error_code": "\(body.code)"])
            }
            let channel = context.channel
            context.writeAndFlush(Self.wrapOutboundOut(frame)).whenComplete { _ in
                channel.close(promise: nil)
            }
        case .forward(let id, let request):
            var deadline: NIODeadline?
            if let timeout = request.timeoutMilliseconds {
                let due = NIODeadline.now() + .milliseconds(Int64(timeout))
                deadline = due
                self.deadlines[id] = due
                if let timer = self.deadlineTimer {
                    // A shorter timeout than any pending one moves the sweep earlier.
                    if due < timer.due {
                        timer.task.cancel()
                        self.armDeadlineTimer(at: due, context: context)
                    }
                } else {
                    self.armDeadlineTimer(at: due, context: context)
                }
            }
            let forwarded = WireServerRequest(
                correlationID: id,
                request: request,
                deadline: deadline,
                peer: self.stateMachine.peerServiceName ?? ""
            )
            self.startHandler(for: forwarded, context: context)
        case .subscribe(let id, let request, let credit):
            let forwarded = WireServerRequest(correlationID: id, request: request, deadline: nil, peer: self.stateMachine.peerServiceName ?? "")
            guard let handler = self.dispatch.handlers[request.method]?.subscription else {
                // The state machine only opens subscriptions for methods registered as such.
                self.endSubscription(WireFrame(correlationID: id, message: .error(WireErrorBody(.unknownMethod(request.method)))), context: context)
                return
            }
            self.startSubscription(for: forwarded, credit: credit, handler: handler, context: context)
        case .delivered(let subscriptionID, let deliveryID, let disposition):
            self.subscriptions[subscriptionID]?.deliver(WireDeliveryOutcome(deliveryID: deliveryID, disposition: disposition))
        case .cancel(let id):
            self.deadlines.removeValue(forKey: id)
            self.subscriptions[id]?.end(.cancelled)
            self.running[id]?.cancel()
        case .read:
            context.read()
        case .close:
            context.close(promise: nil)
        }
    }
}
