import Foundation

/// An SMTP session (RFC 5321, with STARTTLS per RFC 3207 and AUTH PLAIN/LOGIN per RFC 4954) as a pure state machine:
/// fed the server's replies, TLS's completion and the mails to send, it says what to do next. A thin NIO handler
/// drives it (as KontoWire's handlers drive theirs).
///
/// One session sends one mail after another (a mail given while the session is still greeting waits for it): a mail
/// the server accepts leaves the session ready for the next, so a busy courier does not pay a connection, a TLS
/// handshake and a login for every mail. Refusals are sorted for the courier: a 4xx anywhere, a connection that
/// fails, and whatever the deployment must fix (no STARTTLS where it is required, credentials refused) are retried
/// with back-off; a 5xx to the mail's own commands (MAIL, RCPT, DATA) is permanent, and the mail goes to the dead
/// letters. Any refusal ends the session (QUIT): the next mail starts a fresh one.
public struct SMTPClientStateMachine: Sendable {
    public enum Security: Sendable, Equatable {
        /// TLS from the first byte (`smtps://`).
        case implicitTLS
        /// STARTTLS, and no mail without it (`smtp://`).
        case startTLS
        /// Plain text (`smtp://…?tls=none`, for a local mail catcher only).
        case none
    }

    public struct Configuration: Sendable {
        /// The name this client greets with (EHLO).
        public var clientName: String
        public var security: Security
        public var username: String?
        public var password: String?

        public init(clientName: String, security: Security, username: String? = nil, password: String? = nil) {
            self.clientName = clientName
            self.security = security
            self.username = username
            self.password = password
        }
    }

    public enum Action: Sendable, Equatable {
        /// Write these bytes.
        case send([UInt8])
        /// Start TLS on the connection, then call ``tlsEstablished()``.
        case startTLS
        /// Nothing to do until the next reply.
        case wait
        /// The mail in flight was accepted; the session is ready for the next.
        case mailAccepted
        /// The mail just given cannot go on this session (one is in flight, or the session is over); the session
        /// itself goes on as it was.
        case refused(MailError)
        /// The session is over: close the connection. The error says why the mail in flight (if any) was not
        /// accepted; nil after a QUIT said with no mail refused.
        case close(MailError?)
    }

    /// A mail to send: its envelope and its rendered message.
    public struct Mail: Sendable {
        public var from: MailAddress
        public var to: MailAddress
        public var message: [UInt8]

        public init(from: MailAddress, to: MailAddress, message: [UInt8]) {
            self.from = from
            self.to = to
            self.message = message
        }
    }

    private enum State: Sendable {
        case greeting, ehlo, startTLS, tlsHandshake, ehloAfterTLS, authPlain, authLogin, authLoginUser, authLoginPassword
        case ready, mailFrom, rcptTo, data, body, quit, done
    }

    private let configuration: Configuration
    /// The mail in flight, or waiting for the session to be ready.
    private var mail: Mail?
    private var state: State = .greeting
    private var isEncrypted: Bool
    /// Why the mail in flight was refused, kept while QUIT is said.
    private var outcome: MailError?

    public init(configuration: Configuration) {
        self.configuration = configuration
        isEncrypted = configuration.security == .implicitTLS
    }

    /// Whether the session is greeted, logged in and idle: a mail given now starts at once.
    public var isReady: Bool { state == .ready && mail == nil }

    /// Sends `mail` once the session is ready (at once when it is). One mail at a time: a second one before the
    /// first is settled, or one for a session that is over, is refused without touching the session.
    public mutating func send(_ mail: Mail) -> Action {
        guard self.mail == nil, state != .quit, state != .done else {
            // A session ending because it was refused (sign-in, STARTTLS) says so: the mail fails for that reason.
            return .refused(outcome ?? MailError(.transient, "the SMTP session cannot take a mail now"))
        }
        self.mail = mail
        return state == .ready ? mailFrom() : .wait
    }

    /// Ends an idle session politely.
    public mutating func quit() -> Action {
        guard state == .ready, mail == nil else { return .wait }
        state = .quit
        return .send(Array("QUIT\r\n".utf8))
    }

    public mutating func replyReceived(_ reply: SMTPReply) -> Action {
        switch state {
        case .greeting:
            guard reply.code == 220 else { return fail(.transient, "the server greeted with \(reply.code)", quit: reply.isPositive) }
            return ehlo(next: .ehlo)
        case .ehlo, .ehloAfterTLS:
            guard reply.code == 250 else { return fail(.transient, "EHLO answered \(reply.code)", quit: true) }
            let capabilities = reply.lines.dropFirst().map { $0.uppercased() }
            if !isEncrypted && configuration.security == .startTLS {
                guard capabilities.contains(where: { $0 == "STARTTLS" || $0.hasPrefix("STARTTLS ") }) else {
                    return fail(.configuration, "the server does not offer STARTTLS, which the settings require", quit: true)
                }
                state = .startTLS
                return .send(Array("STARTTLS\r\n".utf8))
            }
            return authenticate(capabilities: capabilities)
        case .startTLS:
            guard reply.code == 220 else { return fail(.transient, "STARTTLS answered \(reply.code)", quit: true) }
            state = .tlsHandshake
            return .startTLS
        case .tlsHandshake:
            // Nothing is sent during the handshake: a reply now is a server speaking out of turn.
            return fail(.protocolViolation, "a reply during the TLS handshake", quit: false)
        case .authPlain, .authLoginPassword:
            guard reply.code == 235 else {
                return fail(reply.isTransient ? .transient : .configuration, "the credentials were refused (\(reply.code))", quit: true)
            }
            return sessionReady()
        case .authLogin:
            guard reply.code == 334 else { return fail(reply.isTransient ? .transient : .configuration, "AUTH LOGIN answered \(reply.code)", quit: true) }
            state = .authLoginUser
            return .send(Array((Data((configuration.username ?? "").utf8).base64EncodedString() + "\r\n").utf8))
        case .authLoginUser:
            guard reply.code == 334 else { return fail(reply.isTransient ? .transient : .configuration, "AUTH LOGIN answered \(reply.code) to the username", quit: true) }
            state = .authLoginPassword
            return .send(Array((Data((configuration.password ?? "").utf8).base64EncodedString() + "\r\n").utf8))
        case .ready:
            // Unasked: a server ending an idle session (421 on timeout) or speaking out of turn.
            return fail(.transient, "the server said \(reply.code) unasked", quit: false)
        case .mailFrom:
            guard reply.code == 250 else { return mailRefused(reply, "MAIL FROM") }
            state = .rcptTo
            return .send(Array("RCPT TO:<\(mail?.to.value ?? "")>\r\n".utf8))
        case .rcptTo:
            guard reply.code == 250 || reply.code == 251 else { return mailRefused(reply, "RCPT TO") }
            state = .data
            return .send(Array("DATA\r\n".utf8))
        case .data:
            guard reply.code == 354 else { return mailRefused(reply, "DATA") }
            state = .body
            return .send(Self.dotStuffed(mail?.message ?? []))
        case .body:
            guard reply.code == 250 else { return mailRefused(reply, "the message") }
            mail = nil
            state = .ready
            return .mailAccepted
        case .quit:
            // The mail was refused already (or none was in flight); whatever QUIT gets, the session is over.
            state = .done
            return .close(outcome)
        case .done:
            return .wait
        }
    }

    public mutating func tlsEstablished() -> Action {
        guard state == .tlsHandshake else { return fail(.protocolViolation, "TLS where none was started", quit: false) }
        isEncrypted = true
        // RFC 3207: everything learnt before TLS is forgotten; greet again.
        return ehlo(next: .ehloAfterTLS)
    }

    /// The connection ended (or could not be made): a mail in flight is tried again later.
    public mutating func connectionClosed() -> Action {
        switch state {
        case .done: return .wait
        case .quit:
            state = .done
            return .close(outcome)
        case .ready where mail == nil:
            state = .done
            return .close(nil)
        default:
            state = .done
            return .close(MailError(.transient, "the connection ended before the mail was accepted"))
        }
    }

    private mutating func ehlo(next: State) -> Action {
        state = next
        return .send(Array("EHLO \(configuration.clientName)\r\n".utf8))
    }

    private mutating func authenticate(capabilities: [String]) -> Action {
        guard let username = configuration.username, let password = configuration.password else { return sessionReady() }
        // Credentials never travel in the clear unless the settings chose no TLS (a local catcher).
        guard isEncrypted || configuration.security == .none else {
            return fail(.configuration, "credentials on a connection without TLS", quit: true)
        }
        let mechanisms = capabilities.first { $0.hasPrefix("AUTH ") || $0.hasPrefix("AUTH=") }?.dropFirst(5).split(separator: " ").map(String.init) ?? []
        if mechanisms.contains("PLAIN") {
            state = .authPlain
            let token = Data(([0] + Array(username.utf8) + [0] + Array(password.utf8))).base64EncodedString()
            return .send(Array("AUTH PLAIN \(token)\r\n".utf8))
        }
        if mechanisms.contains("LOGIN") {
            state = .authLogin
            return .send(Array("AUTH LOGIN\r\n".utf8))
        }
        return fail(.configuration, "the server offers neither AUTH PLAIN nor AUTH LOGIN", quit: true)
    }

    /// Greeted and logged in: the waiting mail goes, or the session idles.
    private mutating func sessionReady() -> Action {
        guard mail != nil else {
            state = .ready
            return .wait
        }
        return mailFrom()
    }

    private mutating func mailFrom() -> Action {
        state = .mailFrom
        return .send(Array("MAIL FROM:<\(mail?.from.value ?? "")>\r\n".utf8))
    }

    /// A refusal of the mail's own commands: 4xx later, 5xx never.
    private mutating func mailRefused(_ reply: SMTPReply, _ command: String) -> Action {
        let detail = "\(command) answered \(reply.code) \(reply.text.prefix(200))"
        return fail(reply.isTransient || reply.isPositive ? .transient : .permanent, detail, quit: true)
    }

    /// Ends the conversation with `code`: politely (QUIT, then close) when the server is still listening.
    private mutating func fail(_ code: MailError.Code, _ detail: String, quit: Bool) -> Action {
        let error = MailError(code, detail)
        outcome = error
        guard quit else {
            state = .done
            return .close(error)
        }
        state = .quit
        return .send(Array("QUIT\r\n".utf8))
    }

    /// The message as DATA sends it (RFC 5321 §4.5.2): every line starting with a dot gets another, lines end in
    /// CRLF, and `CRLF.CRLF` ends it.
    static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(message.count + 8)
        var atLineStart = true
        for byte in message {
            if atLineStart && byte == UInt8(ascii: ".") { output.append(byte) }
            output.append(byte)
            atLineStart = byte == UInt8(ascii: "\n")
        }
        if !output.suffix(2).elementsEqual([13, 10]) { output += [13, 10] }
        return output + Array(".\r\n".utf8)
    }
}
