import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// Sends mail to one SMTP server (`smtp://` with STARTTLS, `smtps://` with TLS from the start, or plain text for a
/// local catcher), reusing its sessions: a session that delivered a mail waits, idle, for the next one (up to
/// ``Configuration/maximumIdleConnections`` of them, each for ``Configuration/idleTimeout``, each for at most
/// ``Configuration/mailsPerConnection`` mails), so a busy courier pays a connection, a TLS handshake and a login once,
/// not for every mail (measured: one connection per mail held the courier to a quarter of smtplib's rate over one
/// connection, `konto-bench mail`). A connection and each mail's conversation are bounded in time; a session that
/// refused a mail, failed or timed out is closed, never reused.
public final class SMTPClient: Sendable {
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
        /// The bound of a connection's making, and of each mail's conversation.
        public var timeout: TimeAmount = .seconds(30)
        /// Idle sessions kept for the next mails (the courier's concurrency); 0 sends every mail on a fresh connection.
        public var maximumIdleConnections = 4
        /// An idle session is ended (QUIT) after this: well before a server's own idle limit (RFC 5321: 5 minutes).
        public var idleTimeout: TimeAmount = .seconds(10)
        /// A session is ended after this many mails (some servers limit mails per connection).
        public var mailsPerConnection = 100

        public init(host: String, port: Int, security: SMTPClientStateMachine.Security, username: String? = nil, password: String? = nil) {
            self.host = host
            self.port = port
            self.security = security
            self.username = username
            self.password = password
        }
    }

    /// A session on a connection.
    private struct Session: Sendable {
        let id: Int
        let channel: any Channel
        let end: SMTPSessionEnd
        var mails: Int
    }

    private struct Idle {
        var next = 0
        var sessions: [Session] = []
        var closed = false
    }

    public let configuration: Configuration
    private let group: any EventLoopGroup
    private let tlsContext: NIOSSLContext?
    private let idle = Mutex(Idle())

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

    /// Sends `message`; throws the ``MailError`` that says whether to try again.
    public func send(_ message: MailMessage) async throws(MailError) {
        let mail = SMTPClientStateMachine.Mail(from: message.from, to: message.to, message: message.rendered())
        var session = try await takeSession()
        let channel = session.channel
        let promise = channel.eventLoop.makePromise(of: Void.self)
        // Bounded: a server that stops answering ends the session, and the mail is tried again.
        let timeout = configuration.timeout
        let deadline = channel.eventLoop.scheduleTask(in: timeout) {
            let error = MailError(.transient, "no answer within \(timeout.nanoseconds / 1_000_000_000) s")
            channel.triggerUserOutboundEvent(SMTPClientHandler.Timeout(error: error), promise: nil)
        }
        channel.writeAndFlush(SMTPClientHandler.Request.send(mail), promise: promise)
        do {
            try await promise.futureResult.get()
            deadline.cancel()
        } catch {
            deadline.cancel()
            // The session closes itself after a refusal or failure. A mail that met the session closed already (its
            // sign-in refused while the mail was on its way) fails for the session's reason.
            throw (error as? MailError) ?? session.end.error ?? MailError(.transient, "the conversation failed: \(String(describing: type(of: error)))")
        }
        session.mails += 1
        putBack(session)
    }

    /// Ends the idle sessions, and any put back from now on.
    public func shutdown() async {
        let sessions = idle.withLock { idle in
            idle.closed = true
            defer { idle.sessions = [] }
            return idle.sessions
        }
        for session in sessions {
            try? await session.channel.writeAndFlush(SMTPClientHandler.Request.quit).get()
        }
        for session in sessions {
            try? await session.channel.closeFuture.get()
        }
    }

    /// The most recently used idle session that is still open, or a fresh one.
    private func takeSession() async throws(MailError) -> Session {
        while let session = idle.withLock({ $0.sessions.popLast() }) {
            if session.channel.isActive { return session }
        }
        return try await connect()
    }

    /// Keeps a session for the next mail, unless it has sent its share or enough sessions wait already; an idle
    /// session is ended after ``Configuration/idleTimeout``.
    private func putBack(_ session: Session) {
        let kept = idle.withLock { idle in
            guard !idle.closed, session.mails < configuration.mailsPerConnection, idle.sessions.count < configuration.maximumIdleConnections else {
                return false
            }
            idle.sessions.append(session)
            return true
        }
        guard kept else {
            session.channel.writeAndFlush(SMTPClientHandler.Request.quit, promise: nil)
            return
        }
        session.channel.eventLoop.scheduleTask(in: configuration.idleTimeout) { [self] in
            // Still idle (not taken since, not taken and put back: the id and mail count name this stay)?
            let expired = idle.withLock { idle in
                guard let index = idle.sessions.firstIndex(where: { $0.id == session.id && $0.mails == session.mails }) else { return false }
                idle.sessions.remove(at: index)
                return true
            }
            if expired { session.channel.writeAndFlush(SMTPClientHandler.Request.quit, promise: nil) }
        }
    }

    private func connect() async throws(MailError) -> Session {
        let configuration = self.configuration
        let machine = SMTPClientStateMachine(
            configuration: .init(clientName: configuration.clientName, security: configuration.security, username: configuration.username, password: configuration.password)
        )
        let tlsContext = self.tlsContext
        let end = SMTPSessionEnd()
        let hostname = configuration.host.first?.isNumber == true ? nil : configuration.host
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(configuration.timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    if configuration.security == .implicitTLS, let tlsContext {
                        try sync.addHandler(NIOSSLClientHandler(context: tlsContext, serverHostname: hostname))
                    }
                    try sync.addHandler(SMTPClientHandler(machine: machine, tlsContext: tlsContext, serverHostname: hostname, end: end))
                }
            }
        do {
            let channel = try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
            let id = idle.withLock { idle in
                defer { idle.next += 1 }
                return idle.next
            }
            return Session(id: id, channel: channel, end: end, mails: 0)
        } catch {
            throw MailError(.transient, "cannot connect to \(configuration.host):\(configuration.port)")
        }
    }
}
