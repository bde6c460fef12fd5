import Foundation
@testable import KontoMail
import Testing

/// The SMTP conversation as a pure state machine, fed scripted replies: what it sends at each step, and how each
/// refusal is sorted (retried later, or a dead letter).
@Suite("Mail: SMTP client state machine")
struct SMTPClientStateMachineTests {
    static let message = Array("Subject: hi\r\n\r\n.a line with a dot\r\nend".utf8)

    static func mail(to: String = "ada@example.org", _ message: [UInt8] = message) throws -> SMTPClientStateMachine.Mail {
        SMTPClientStateMachine.Mail(from: try MailAddress("accounts@example.org"), to: try MailAddress(to), message: message)
    }

    /// A new session with a mail given before the greeting (as the client gives a fresh connection's first mail).
    static func machine(_ security: SMTPClientStateMachine.Security, username: String? = "konto", password: String? = "s3cret") throws -> SMTPClientStateMachine {
        var machine = SMTPClientStateMachine(configuration: .init(clientName: "konto.example.org", security: security, username: username, password: password))
        #expect(machine.send(try mail()) == .wait)
        return machine
    }

    static func reply(_ code: Int, _ lines: String...) -> SMTPReply {
        SMTPReply(code: code, lines: lines.isEmpty ? [""] : lines)
    }

    static func sent(_ action: SMTPClientStateMachine.Action) -> String? {
        if case .send(let bytes) = action { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    @Test("STARTTLS, then AUTH PLAIN, MAIL, RCPT, DATA with the message dot-stuffed: accepted; the next mail on the same session; QUIT when idle")
    func startTLSAndPlain() throws {
        var machine = try Self.machine(.startTLS)
        #expect(Self.sent(machine.replyReceived(Self.reply(220, "mail.example.org ESMTP"))) == "EHLO konto.example.org\r\n")
        #expect(Self.sent(machine.replyReceived(Self.reply(250, "mail.example.org", "STARTTLS", "AUTH PLAIN LOGIN"))) == "STARTTLS\r\n")
        #expect(machine.replyReceived(Self.reply(220, "go ahead")) == .startTLS)
        #expect(Self.sent(machine.tlsEstablished()) == "EHLO konto.example.org\r\n")
        let auth = try #require(Self.sent(machine.replyReceived(Self.reply(250, "mail.example.org", "AUTH PLAIN LOGIN"))))
        // ("\r\n" is one Character.)
        let token = try #require(Data(base64Encoded: String(auth.dropFirst("AUTH PLAIN ".count).dropLast(1))))
        #expect(auth.hasPrefix("AUTH PLAIN ") && Array(token) == [0] + Array("konto".utf8) + [0] + Array("s3cret".utf8))
        #expect(Self.sent(machine.replyReceived(Self.reply(235, "ok"))) == "MAIL FROM:<accounts@example.org>\r\n")
        #expect(Self.sent(machine.replyReceived(Self.reply(250))) == "RCPT TO:<ada@example.org>\r\n")
        #expect(Self.sent(machine.replyReceived(Self.reply(250))) == "DATA\r\n")
        #expect(Self.sent(machine.replyReceived(Self.reply(354, "end with ."))) == "Subject: hi\r\n\r\n..a line with a dot\r\nend\r\n.\r\n")
        #expect(machine.replyReceived(Self.reply(250, "queued")) == .mailAccepted)
        #expect(machine.isReady)
        // The next mail goes at once: no greeting, TLS or login again.
        #expect(Self.sent(machine.send(try Self.mail(to: "grace@example.org", Array("x".utf8)))) == "MAIL FROM:<accounts@example.org>\r\n")
        #expect(!machine.isReady)
        // One at a time.
        #expect(machine.send(try Self.mail()) == .refused(MailError(.transient, "the SMTP session cannot take a mail now")))
        #expect(machine.quit() == .wait, "no QUIT with a mail in flight")
        #expect(Self.sent(machine.replyReceived(Self.reply(250))) == "RCPT TO:<grace@example.org>\r\n")
        #expect(Self.sent(machine.replyReceived(Self.reply(250))) == "DATA\r\n")
        #expect(Self.sent(machine.replyReceived(Self.reply(354))) == "x\r\n.\r\n")
        #expect(machine.replyReceived(Self.reply(250)) == .mailAccepted)
        #expect(Self.sent(machine.quit()) == "QUIT\r\n")
        #expect(machine.replyReceived(Self.reply(221)) == .close(nil))
        #expect(machine.send(try Self.mail()) == .refused(MailError(.transient, "the SMTP session cannot take a mail now")), "a session that is over takes no mail")
    }

    @Test("a session greeted without a mail idles until one is given; the server ending it idle (421) closes it without a mail to fail")
    func idleSession() throws {
        var machine = SMTPClientStateMachine(configuration: .init(clientName: "konto.example.org", security: .none))
        #expect(Self.sent(machine.replyReceived(Self.reply(220))) == "EHLO konto.example.org\r\n")
        #expect(machine.replyReceived(Self.reply(250, "x")) == .wait)
        #expect(machine.isReady)
        #expect(Self.sent(machine.send(try Self.mail())) == "MAIL FROM:<accounts@example.org>\r\n")
        for reply in [Self.reply(250), Self.reply(250), Self.reply(354)] { _ = machine.replyReceived(reply) }
        #expect(machine.replyReceived(Self.reply(250)) == .mailAccepted)
        #expect(machine.replyReceived(Self.reply(421, "idle too long")) == .close(MailError(.transient, "the server said 421 unasked")))

        var closed = SMTPClientStateMachine(configuration: .init(clientName: "konto.example.org", security: .none))
        _ = closed.replyReceived(Self.reply(220))
        _ = closed.replyReceived(Self.reply(250, "x"))
        #expect(closed.connectionClosed() == .close(nil), "an idle session's end fails no mail")
    }

    @Test("a mail given to a session that is ending for a refusal fails for that refusal, not as a busy session")
    func mailAfterRefusal() throws {
        var machine = SMTPClientStateMachine(configuration: .init(clientName: "konto.example.org", security: .startTLS))
        _ = machine.replyReceived(Self.reply(220))
        let refusal = MailError(.configuration, "the server does not offer STARTTLS, which the settings require")
        #expect(Self.sent(machine.replyReceived(Self.reply(250, "x"))) == "QUIT\r\n")
        #expect(machine.send(try Self.mail()) == .refused(refusal), "while QUIT is said")
        #expect(machine.replyReceived(Self.reply(221)) == .close(refusal))
        #expect(machine.send(try Self.mail()) == .refused(refusal), "after the end")

        var idle = SMTPClientStateMachine(configuration: .init(clientName: "konto.example.org", security: .none))
        _ = idle.replyReceived(Self.reply(220))
        _ = idle.replyReceived(Self.reply(250, "x"))
        _ = idle.quit()
        #expect(idle.send(try Self.mail()) == .refused(MailError(.transient, "the SMTP session cannot take a mail now")), "an idle session ended politely refused nothing")
    }

    @Test("implicit TLS with AUTH LOGIN; without credentials no AUTH at all")
    func implicitTLSAndLogin() throws {
        var machine = try Self.machine(.implicitTLS)
        _ = machine.replyReceived(Self.reply(220))
        #expect(Self.sent(machine.replyReceived(Self.reply(250, "x", "AUTH LOGIN"))) == "AUTH LOGIN\r\n")
        #expect(Self.sent(machine.replyReceived(Self.reply(334, "VXNlcm5hbWU6"))) == Data("konto".utf8).base64EncodedString() + "\r\n")
        #expect(Self.sent(machine.replyReceived(Self.reply(334, "UGFzc3dvcmQ6"))) == Data("s3cret".utf8).base64EncodedString() + "\r\n")
        #expect(Self.sent(machine.replyReceived(Self.reply(235))) == "MAIL FROM:<accounts@example.org>\r\n")

        var anonymous = try Self.machine(.none, username: nil, password: nil)
        _ = anonymous.replyReceived(Self.reply(220))
        #expect(Self.sent(anonymous.replyReceived(Self.reply(250, "x", "AUTH PLAIN"))) == "MAIL FROM:<accounts@example.org>\r\n")
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let script: [SMTPReply]
        let security: SMTPClientStateMachine.Security
        let expected: MailError.Code
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "421 at the greeting", script: [reply(421, "busy")], security: .none, expected: .transient),
        Refusal(name: "no STARTTLS where it is required", script: [reply(220), reply(250, "x", "AUTH PLAIN")], security: .startTLS, expected: .configuration),
        Refusal(name: "credentials refused", script: [reply(220), reply(250, "x", "AUTH PLAIN"), reply(535, "no")], security: .none, expected: .configuration),
        Refusal(name: "no mechanism Konto speaks", script: [reply(220), reply(250, "x", "AUTH CRAM-MD5")], security: .none, expected: .configuration),
        Refusal(name: "451 to MAIL FROM", script: [reply(220), reply(250, "x", "AUTH PLAIN"), reply(235), reply(451, "later")], security: .none, expected: .transient),
        Refusal(name: "550 to RCPT TO", script: [reply(220), reply(250, "x", "AUTH PLAIN"), reply(235), reply(250), reply(550, "no such user")], security: .none, expected: .permanent),
        Refusal(name: "554 to DATA", script: [reply(220), reply(250, "x", "AUTH PLAIN"), reply(235), reply(250), reply(250), reply(554)], security: .none, expected: .permanent),
        Refusal(name: "452 to the message", script: [reply(220), reply(250, "x", "AUTH PLAIN"), reply(235), reply(250), reply(250), reply(354), reply(452, "full")], security: .none, expected: .transient),
    ]

    @Test("each refusal says QUIT and is sorted: later (4xx, the deployment's settings) or never (5xx to the mail)", arguments: refusals)
    func refusal(_ refusal: Refusal) throws {
        var machine = try Self.machine(refusal.security)
        var last: SMTPClientStateMachine.Action = .wait
        for reply in refusal.script { last = machine.replyReceived(reply) }
        // A 421 greeting closes at once (the server is going away); other refusals say QUIT first.
        if Self.sent(last) == "QUIT\r\n" { last = machine.replyReceived(Self.reply(221)) }
        guard case .close(let error?) = last else { Issue.record("no close: \(last)"); return }
        #expect(error.code == refusal.expected)
        #expect(error.isPermanent == (refusal.expected == .permanent))
    }

    @Test("credentials never go out in the clear when TLS was asked for; a connection that ends before the mail's acceptance is retried; after it, not")
    func connectionEnds() throws {
        var machine = try Self.machine(.startTLS)
        _ = machine.replyReceived(Self.reply(220))
        _ = machine.replyReceived(Self.reply(250, "x", "STARTTLS", "AUTH PLAIN"))
        _ = machine.replyReceived(Self.reply(220))
        // The connection fails in the handshake: no AUTH was ever sent, and the mail is tried again.
        #expect(machine.connectionClosed() == .close(MailError(.transient, "the connection ended before the mail was accepted")))
        #expect(machine.connectionClosed() == .wait, "closed once")

        var accepted = try Self.machine(.none, username: nil, password: nil)
        for reply in [Self.reply(220), Self.reply(250), Self.reply(250), Self.reply(250), Self.reply(354), Self.reply(250)] { _ = accepted.replyReceived(reply) }
        #expect(accepted.connectionClosed() == .close(nil), "the server accepted the mail; the session's end does not matter")
    }

    @Test("replies: multi-line, split anywhere, bare LF; malformed, mixed codes, long lines and endless replies refused")
    func replies() throws {
        let stream = Array("220 hello\r\n250-mail.example.org\r\n250-STARTTLS\r\n250 AUTH PLAIN LOGIN\r\n354 go\n".utf8)
        for split in 0...stream.count {
            var parser = SMTPReplyParser()
            let replies = try parser.feed(stream[..<split]) + parser.feed(stream[split...])
            #expect(replies == [
                SMTPReply(code: 220, lines: ["hello"]), SMTPReply(code: 250, lines: ["mail.example.org", "STARTTLS", "AUTH PLAIN LOGIN"]),
                SMTPReply(code: 354, lines: ["go"]),
            ])
        }
        for bad in ["hello\r\n", "2x0 no\r\n", "600 no\r\n", "250-a\r\n251 b\r\n", "25\r\n", "250_x\r\n",
                    "250 " + String(repeating: "x", count: 3_000) + "\r\n", String(repeating: "250-x\r\n", count: 101)] {
            var parser = SMTPReplyParser()
            #expect(throws: MailError.self, "\(bad.prefix(20).debugDescription)") { try parser.feed(Array(bad.utf8)) }
        }
    }

    @Test("dot-stuffing: a leading dot doubled on every line, the end marker once")
    func dotStuffing() {
        #expect(String(decoding: SMTPClientStateMachine.dotStuffed(Array(".\r\n..\r\na.b\r\n".utf8)), as: UTF8.self) == "..\r\n...\r\na.b\r\n.\r\n")
        #expect(String(decoding: SMTPClientStateMachine.dotStuffed(Array("no line end".utf8)), as: UTF8.self) == "no line end\r\n.\r\n")
    }
}
