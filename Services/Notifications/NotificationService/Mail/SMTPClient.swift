import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Sends mail to one SMTP server (`smtp://` with STARTTLS, `smtps://` with TLS from the start, or plain text for a
/// local catcher), one connection per mail. The connection and the whole conversation are bounded in time.
public struct SMTPClient: Sendable {
    public struct Configuration: Sendable {
        public var host: String
        public var port: Int
        public var security: SMTPClientStateMachine.Security
        public var username: String?
        public var password: String?
        /// The name this client greets the server with.
        public var clientName: String = "localhost"
        /// Trust for the server's certificate; nil: the system's.
        public var trustRoots: NIOSSLTrustRoots = .default
        public var timeout: TimeAmount = .seconds(30)

        public init(host: String, port: Int, security: SMTPClientStateMachine.Security, username: String? = nil, password: String? = nil) {
            self.host = host
            self.port = port
            self.security = security
            self.username = username
            self.password = password
        }
    }

    public let configuration: Configuration
    private let group: any EventLoopGroup
    private let tlsContext: NIOSSLContext?

    public init(configuration: Configuration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        self.configuration = configuration
        self.group = group
        if configuration.security == .none {
            tlsContext = nil
        } else {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = configuration.trustRoots
            tls.minimumTLSVersion = .tlsv12
            tlsContext = try NIOSSLContext(configuration: tls)
        }
    }

    /// Sends `message` from `from` to `to`; throws the ``MailError`` that says whether to try again.
    public func send(_ message: MailMessage) async throws(MailError) {
        let configuration = self.configuration
        let machine = SMTPClientStateMachine(
            configuration: .init(clientName: configuration.clientName, security: configuration.security, username: configuration.username, password: configuration.password),
            from: message.from, to: message.to, message: message.rendered()
        )
        let eventLoop = group.next()
        let result = eventLoop.makePromise(of: Void.self)
        let tlsContext = self.tlsContext
        let hostname = configuration.host.first?.isNumber == true ? nil : configuration.host
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(configuration.timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if configuration.security == .implicitTLS, let tlsContext {
                        try sync.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: hostname))
                    }
                    try sync.addHandler(SMTPClientHandler(machine: machine, result: result, tlsContext: tlsContext, serverHostname: hostname))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
        } catch {
            result.fail(error)
            throw MailError(.transient, "cannot connect to \(configuration.host):\(configuration.port)")
        }
        // Bounded: a server that stops answering ends the conversation, and the mail is tried again.
        let deadline = eventLoop.scheduleTask(in: configuration.timeout) {
            result.fail(MailError(.transient, "no answer within \(configuration.timeout.nanoseconds / 1_000_000_000) s"))
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        do {
            try await result.futureResult.get()
        } catch let error as MailError {
            throw error
        } catch {
            throw MailError(.transient, "the conversation failed: \(String(describing: type(of: error)))")
        }
    }
}
