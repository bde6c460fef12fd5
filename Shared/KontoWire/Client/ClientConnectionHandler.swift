import Logging
import NIOCore

/// Thin driver of ``ClientConnectionStateMachine`` for one pooled connection.
final class ClientConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = WireFrame
    typealias InboundOut = Never
    typealias OutboundIn = ClientCommand
    typealias OutboundOut = WireFrame

    private var stateMachine: ClientConnectionStateMachine
    private let handshakePromise: EventLoopPromise<WireWelcome>
    private let onGoAway: @Sendable () -> Void
    private var timers: [UInt64: Scheduled<Void>] = [:]
    private let logger: Logger

    init(
        configuration: ClientConnectionStateMachine.Configuration,
        handshakePromise: EventLoopPromise<WireWelcome>,
        logger: Logger,
        onGoAway: @escaping @Sendable () -> Void
    ) {
        self.stateMachine = ClientConnectionStateMachine(configuration: configuration)
        self.handshakePromise = handshakePromise
        self.logger = logger
        self.onGoAway = onGoAway
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.run(self.stateMachine.frameReceived(Self.unwrapInboundIn(data)), context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let command: ClientRequestCommand
        switch Self.unwrapOutboundIn(data) {
        case .request(let request):
            command = request
        case .subscribe(let request, let sink, let opened):
            let (action, id) = self.stateMachine.openSubscription(request, sink: sink)
            if case .write = action {
                opened.succeed(id)
            } else {
                opened.fail(WireError.connectionClosed)
            }
            self.run(action, context: context, writePromise: promise)
            return
        case .acknowledge(let subscriptionID, let deliveryID, let disposition):
            self.run(self.stateMachine.acknowledge(subscriptionID: subscriptionID, deliveryID: deliveryID, disposition: disposition), context: context, writePromise: promise)
            return
        case .cancelSubscription(let id):
            self.run(self.stateMachine.cancelSubscription(id), context: context, writePromise: promise)
            self.closeIfDrained(context: context)
            return
        }
        let (action, id) = self.stateMachine.sendRequest(command.request, promise: command.promise)
        if case .write = action {
            self.timers[id] = context.eventLoop.assumeIsolated().scheduleTask(in: command.timeout) {
                self.timers[id] = nil
                self.run(self.stateMachine.requestTimedOut(correlationID: id), context: context)
            }
            let channel = context.channel
            command.promise.futureResult.assumeIsolated().whenComplete { _ in
                self.timers.removeValue(forKey: id)?.cancel()
                // After goaway the connection closes once its last answer is in.
                if self.stateMachine.isDrained {
                    channel.close(promise: nil)
                }
            }
        }
        self.run(action, context: context, writePromise: promise)
    }

    /// After goaway the connection closes once its last answer is in and its last subscription over.
    private func closeIfDrained(context: ChannelHandlerContext) {
        if self.stateMachine.isDrained {
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            self.run(self.stateMachine.heartbeatDue(), context: context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.run(self.stateMachine.errorCaught(error), context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.run(self.stateMachine.channelInactive(), context: context)
        self.handshakePromise.fail(WireError.connectionClosed)
        context.fireChannelInactive()
    }

    private func run(
        _ action: ClientConnectionStateMachine.Action,
        context: ChannelHandlerContext,
        writePromise: EventLoopPromise<Void>? = nil
    ) {
        switch action {
        case .none:
            writePromise?.succeed()
        case .write(let frame):
            context.writeAndFlush(Self.wrapOutboundOut(frame), promise: writePromise)
        case .handshakeCompleted(let welcome):
            self.handshakePromise.succeed(welcome)
        case .succeed(let promise, let response):
            promise.succeed(response)
        case .fail(let promise, let error):
            writePromise?.succeed()
            promise.fail(error)
        case .deliver(let sink, let delivery):
            writePromise?.succeed()
            sink.yield(delivery)
        case .endSubscription(let sink, let error):
            writePromise?.succeed()
            if let error {
                sink.finish(throwing: error)
            } else {
                sink.finish()
            }
            self.closeIfDrained(context: context)
        case .goingAway(let failing, let close):
            self.onGoAway()
            for promise in failing { promise.fail(WireError.shuttingDown) }
            if close { context.close(promise: nil) }
        case .closeAndFail(let promises, let error, let sinks):
            writePromise?.fail(error)
            self.handshakePromise.fail(error)
            for promise in promises { promise.fail(error) }
            for sink in sinks { sink.finish(throwing: error) }
            for timer in self.timers.values { timer.cancel() }
            self.timers.removeAll()
            context.close(promise: nil)
        }
    }
}
