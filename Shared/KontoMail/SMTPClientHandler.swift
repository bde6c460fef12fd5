import NIOCore
import NIOSSL
import NIOTLS

/// Drives one ``SMTPClientStateMachine`` on a channel: replies in, commands out, STARTTLS by putting a TLS handler
/// first in the pipeline. A mail is written to the channel as ``Request/send(_:)``, its promise completed once the
/// server accepted it or the session ended without that.
final class SMTPClientHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = Request
    typealias OutboundOut = ByteBuffer

    enum Request {
        /// Send this mail (one at a time); the write's promise says whether the server accepted it.
        case send(SMTPClientStateMachine.Mail)
        /// End the idle session (QUIT).
        case quit
    }

    /// An outbound user event: the mail in flight took too long; the session ends and the mail fails with this.
    struct Timeout {
        let error: MailError
    }

    private var machine: SMTPClientStateMachine
    private var parser = SMTPReplyParser()
    private let tlsContext: NIOSSLContext?
    private let serverHostname: String?
    /// Whether this handler put TLS in (STARTTLS): implicit TLS completes its handshake before the greeting.
    private var startedTLS = false
    /// The promise of the mail in flight.
    private var inFlight: EventLoopPromise<Void>?

    /// Where the session's end is told to the client.
    private let end: SMTPSessionEnd

    init(machine: SMTPClientStateMachine, tlsContext: NIOSSLContext?, serverHostname: String?, end: SMTPSessionEnd) {
        self.machine = machine
        self.end = end
        self.tlsContext = tlsContext
        self.serverHostname = serverHostname
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .send(let mail):
            let action = machine.send(mail)
            if case .refused(let error) = action {
                promise?.fail(error)
                return
            }
            inFlight = promise ?? context.eventLoop.makePromise()
            run(action, context: context)
        case .quit:
            run(machine.quit(), context: context)
            promise?.succeed(())
        }
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if let timeout = event as? Timeout {
            finish(timeout.error, context: context)
            promise?.succeed(())
        } else {
            context.triggerUserOutboundEvent(event, promise: promise)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        do {
            for reply in try parser.feed(buffer.readableBytesView) {
                run(machine.replyReceived(reply), context: context)
            }
        } catch {
            finish(error, context: context)
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
        finish(MailError(.transient, "the connection failed: \(String(describing: type(of: error)))"), context: context)
    }

    private func run(_ action: SMTPClientStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .send(let bytes):
            context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
        case .startTLS:
            guard let tlsContext else {
                finish(MailError(.configuration, "STARTTLS without a TLS configuration"), context: context)
                return
            }
            do {
                let handler = try NIOSSLClientHandler(context: tlsContext, serverHostname: serverHostname)
                try context.pipeline.syncOperations.addHandler(handler, position: .first)
                startedTLS = true
            } catch {
                finish(MailError(.configuration, "TLS could not start: \(String(describing: type(of: error)))"), context: context)
            }
        case .wait, .refused:
            break
        case .mailAccepted:
            let promise = inFlight
            inFlight = nil
            promise?.succeed(())
        case .close(let error):
            finish(error, context: context)
        }
    }

    /// Ends the session: the mail in flight fails with `error` (or with the session's end when there is none).
    private func finish(_ error: MailError?, context: ChannelHandlerContext) {
        if let error { end.record(error) }
        let promise = inFlight
        inFlight = nil
        promise?.fail(error ?? MailError(.transient, "the SMTP session ended before the mail was accepted"))
        context.close(promise: nil)
    }
}
