import Logging
import NIOCore

/// Thin driver of ``ServerConnectionStateMachine``: turns channel events into state machine
/// events and carries out the actions. It sits between the frame codec and the NIOAsyncChannel.
final class ServerConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = WireFrame
    typealias InboundOut = WireServerRequest
    typealias OutboundIn = WireFrame
    typealias OutboundOut = WireFrame

    private var stateMachine: ServerConnectionStateMachine
    /// Deadlines of requests still in flight, swept by one timer set for the earliest; cheaper
    /// than a timer per request, which showed up in profiles of the benchmark.
    private var deadlines: [UInt64: NIODeadline] = [:]
    private var deadlineTimer: (due: NIODeadline, task: Scheduled<Void>)?
    private var started = false
    private var logger: Logger

    init(configuration: ServerConnectionStateMachine.Configuration, logger: Logger) {
        self.stateMachine = ServerConnectionStateMachine(configuration: configuration)
        self.logger = logger
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
        self.run(self.stateMachine.channelActive(nonce: WireHandshake.makeNonce()), context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        self.run(self.stateMachine.frameReceived(frame), context: context)
    }

    func read(context: ChannelHandlerContext) {
        self.run(self.stateMachine.readRequested(), context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = Self.unwrapOutboundIn(data)
        switch frame.message {
        case .response, .error:
            let id = frame.correlationID
            self.deadlines.removeValue(forKey: id)
            let (shouldWrite, next) = self.stateMachine.answerWritten(correlationID: id)
            if case .close = next {
                // The last answer of a drain: it must reach the peer before the close.
                let written = context.eventLoop.makePromise(of: Void.self)
                if shouldWrite {
                    context.writeAndFlush(data, promise: written)
                } else {
                    written.succeed()
                }
                written.futureResult.cascade(to: promise)
                let channel = context.channel
                written.futureResult.whenComplete { _ in channel.close(promise: nil) }
                return
            }
            if shouldWrite {
                context.write(data, promise: promise)
            } else {
                promise?.succeed()
            }
            self.run(next, context: context)
        default:
            context.write(data, promise: promise)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let idle as IdleStateHandler.IdleStateEvent where idle == .read:
            self.logger.debug("Closing idle wire connection")
            self.run(self.stateMachine.idleTimeout(), context: context)
        case is WireServerShutdownEvent:
            self.run(self.stateMachine.gracefulShutdown(), context: context)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.logger.debug("Refusing wire input", metadata: ["konto.error": "\(error)"])
        self.run(self.stateMachine.errorCaught(error), context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stateMachine.channelInactive()
        self.deadlineTimer?.task.cancel()
        self.deadlineTimer = nil
        self.deadlines.removeAll()
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
            context.fireChannelRead(Self.wrapInboundOut(forwarded))
        case .read:
            context.read()
        case .close:
            context.close(promise: nil)
        }
    }
}
