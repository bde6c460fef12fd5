import NIOCore
import NIOSSL
import NIOTLS

/// Drives one ``SMTPClientStateMachine`` on a channel: replies in, commands out, STARTTLS by putting a TLS handler
/// first in the pipeline; the conversation's outcome completes `result`.
final class SMTPClientHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var machine: SMTPClientStateMachine
    private var parser = SMTPReplyParser()
    private let result: EventLoopPromise<Void>
    private let tlsContext: NIOSSLContext?
    private let serverHostname: String?
    /// Whether this handler put TLS in (STARTTLS): implicit TLS completes its handshake before the greeting.
    private var startedTLS = false

    init(machine: SMTPClientStateMachine, result: EventLoopPromise<Void>, tlsContext: NIOSSLContext?, serverHostname: String?) {
        self.machine = machine
        self.result = result
        self.tlsContext = tlsContext
        self.serverHostname = serverHostname
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        do {
            for reply in try parser.feed(buffer.readableBytesView) {
                run(machine.replyReceived(reply), context: context)
            }
        } catch {
            finish(.failure(error), context: context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event, startedTLS {
            run(machine.tlsEstablished(), context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        run(machine.connectionClosed(), context: context)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A TLS or socket failure: the connection ends, and the mail is tried again later.
        finish(.failure(MailError(.transient, "the connection failed: \(String(describing: type(of: error)))")), context: context)
    }

    private func run(_ action: SMTPClientStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .send(let bytes):
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        case .startTLS:
            guard let tlsContext else {
                finish(.failure(MailError(.configuration, "STARTTLS without a TLS configuration")), context: context)
                return
            }
            do {
                let handler = try NIOSSLClientHandler(context: tlsContext, serverHostname: serverHostname)
                try context.pipeline.syncOperations.addHandler(handler, position: .first)
                startedTLS = true
            } catch {
                finish(.failure(MailError(.configuration, "TLS could not start: \(String(describing: type(of: error)))")), context: context)
            }
        case .wait:
            break
        case .close(let error):
            finish(error.map { .failure($0) } ?? .success(()), context: context)
        }
    }

    private func finish(_ outcome: Result<Void, any Error>, context: ChannelHandlerContext) {
        switch outcome {
        case .success: result.succeed(())
        case .failure(let error): result.fail(error)
        }
        context.close(promise: nil)
    }
}
