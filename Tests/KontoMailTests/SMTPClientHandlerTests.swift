import Foundation
@testable import KontoMail
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

/// The handler between the state machine and a channel, and the client over real sockets, when a session ends
/// before its mail reaches it: the mail fails for the session's reason (the deployment's to fix), not as a closed
/// channel (retried as if the server were busy).
@Suite("Mail: SMTP client handler")
struct SMTPClientHandlerTests {
    static let refusal = MailError(.configuration, "the server does not offer STARTTLS, which the settings require")

    static func mail() throws -> SMTPClientStateMachine.Mail {
        SMTPClientStateMachine.Mail(from: try MailAddress("accounts@example.org"), to: try MailAddress("ada@example.org"), message: Array("Subject: hi\r\n\r\nhi".utf8))
    }

    @Test("a session refused at its start records why before it closes; a mail written afterwards meets the closed channel, its reason kept")
    func endRecorded() throws {
        let end = SMTPSessionEnd()
        let machine = SMTPClientStateMachine(configuration: .init(clientName: "konto.example.org", security: .startTLS))
        let channel = EmbeddedChannel(handler: SMTPClientHandler(machine: machine, tlsContext: nil, serverHostname: nil, end: end))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 25)).wait()
        try channel.writeInbound(ByteBuffer(string: "220 mail.example.org ESMTP\r\n"))
        #expect(try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } == "EHLO konto.example.org\r\n")
        try channel.writeInbound(ByteBuffer(string: "250 mail.example.org\r\n"))
        #expect(try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } == "QUIT\r\n")
        #expect(end.error == nil, "not ended yet: QUIT is being said")
        try channel.writeInbound(ByteBuffer(string: "221 bye\r\n"))
        #expect(end.error == Self.refusal && !channel.isActive)
        let written = channel.writeAndFlush(SMTPClientHandler.Request.send(try Self.mail()))
        #expect(throws: (any Error).self) { try written.wait() }
        end.record(MailError(.transient, "what followed"))
        #expect(end.error == Self.refusal, "the first reason stays")
    }

    @Test("over real sockets, many rounds at once: each mail to a server that refuses the session fails for that refusal, however the write and the refusal interleave")
    func refusedSessions() async throws {
        let group = MultiThreadedEventLoopGroup.singleton
        let server = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(NoTLSServer()) } }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { server.close(promise: nil) }
        let port = try #require(server.localAddress?.port)
        var configuration = SMTPClient.Configuration(host: "127.0.0.1", port: port, security: .startTLS)
        configuration.maximumIdleConnections = 0
        configuration.timeout = .seconds(10)
        let client = try SMTPClient(configuration: configuration)
        let message = MailMessage(
            from: try MailAddress("accounts@example.org"), fromName: "Konto", to: try MailAddress("ada@example.org"), subject: "hi", text: "hi", html: "<p>hi</p>",
            messageId: "<race@example.org>", date: Date()
        )
        for round in 0..<10 {
            let errors = await withTaskGroup(of: MailError?.self) { tasks in
                for _ in 0..<8 {
                    tasks.addTask {
                        do throws(MailError) {
                            try await client.send(message)
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
                return await tasks.reduce(into: [MailError?]()) { $0.append($1) }
            }
            #expect(errors.allSatisfy { $0 == Self.refusal }, "round \(round): \(errors)")
        }
    }
}

/// An SMTP server that offers no STARTTLS: greets, answers EHLO without it, says goodbye to QUIT and closes.
private final class NoTLSServer: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private var pending = ""

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "220 fake ESMTP\r\n")), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending += String(buffer: unwrapInboundIn(data))
        while let end = pending.range(of: "\r\n") {
            let line = String(pending[..<end.lowerBound]).uppercased()
            pending.removeSubrange(..<end.upperBound)
            if line.hasPrefix("EHLO") {
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "250 fake\r\n")), promise: nil)
            } else if line.hasPrefix("QUIT") {
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "221 bye\r\n"))).whenComplete { _ in context.close(promise: nil) }
            } else {
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "503 bad sequence\r\n")), promise: nil)
            }
        }
    }
}
