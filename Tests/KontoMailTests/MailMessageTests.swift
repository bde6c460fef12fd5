import Foundation
import KontoTestSupport
@testable import KontoMail
import Testing

/// Mail as MIME, judged by Python's `email` package (the standard library's parser, which no one here wrote): the
/// subject, sender, bodies, Message-ID and Date read back as written, with no defect; and no value a user chose can
/// add a header.
@Suite("Mail: MIME")
struct MailMessageTests {
    static let python = ProcessInfo.processInfo.environment["KONTO_PYTHON"] ?? "/usr/bin/python3"

    struct Parsed: Decodable {
        var subject: String
        var from: String
        var to: String
        var messageId: String
        var date: String
        var text: String
        var html: String
        var headers: [String]
        var defects: [String]
    }

    /// The message as Python's email package reads it.
    static func parse(_ bytes: [UInt8]) async throws -> Parsed {
        let script = """
            import sys, json, email, email.policy
            message = email.message_from_bytes(sys.stdin.buffer.read(), policy=email.policy.default)
            defects = [type(d).__name__ for d in message.defects]
            for part in message.walk():
                defects += [type(d).__name__ for d in part.defects]
            print(json.dumps({
                "subject": str(message["subject"]), "from": str(message["from"]), "to": str(message["to"]),
                "messageId": str(message["message-id"]), "date": str(message["date"]),
                "text": message.get_body(("plain",)).get_content(), "html": message.get_body(("html",)).get_content(),
                "headers": list(message.keys()), "defects": defects,
            }))
            """
        let run = try await ServiceProcess.run(python, arguments: ["-c", script], input: String(decoding: bytes, as: UTF8.self))
        #expect(run.status == 0, "\(run.standardError)")
        return try JSONDecoder().decode(Parsed.self, from: Data(run.standardOutput.utf8))
    }

    static func message(subject: String, text: String, html: String = "<p>Hello</p>", fromName: String? = "Konto") throws -> MailMessage {
        let from = try MailAddress("accounts@example.org")
        return MailMessage(
            from: from, fromName: fromName, to: try MailAddress("ada@example.org"), subject: subject, text: text, html: html,
            messageId: "<1234@example.org>", date: Date(timeIntervalSince1970: 1_800_000_000)
        )
    }

    @Test("subjects, names and bodies read back exactly: ASCII, UTF-8, long, with dots, tabs, trailing spaces and every line ending")
    func roundTrip() async throws {
        let cases: [(String, String)] = [
            ("Reset your password", "Open this link:\nhttps://example.org/account/reset/confirm?token=abc=def\n"),
            ("Bestätige deine Adresse – Grüße 👋", "Hallo Åsa,\r\n.\r\n.. zwei Punkte\r\nEnde."),
            (String(repeating: "A very long subject ", count: 20), String(repeating: "x", count: 500) + "\n" + String(repeating: "é", count: 200)),
            ("=?UTF-8?B?bm90IGEgd29yZA==?= stays text", "trailing space \ntab\there\rold mac line\n\n"),
        ]
        for (subject, text) in cases {
            let message = try Self.message(subject: subject, text: text, html: "<p>\(text)</p>")
            let bytes = message.rendered()
            // SMTP's limits: 998 characters a line (RFC 5322), CRLF only.
            let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
            #expect(lines.allSatisfy { $0.utf8.count <= 998 && !$0.contains("\n") && !$0.contains("\r") })
            #expect(!lines.contains("."), "a line that is SMTP's end of data")
            let parsed = try await Self.parse(bytes)
            #expect(parsed.subject == subject.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " "))
            let normalized = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            // The canonical form of text in MIME has CRLF line ends: the decoded text keeps them.
            let text = parsed.text.replacingOccurrences(of: "\r\n", with: "\n")
            #expect(text == normalized || text == normalized + "\n", "\(parsed.text.debugDescription) vs \(normalized.debugDescription)")
            #expect(parsed.html.hasPrefix("<p>"))
            #expect(parsed.defects == [], "\(parsed.defects)")
            #expect(parsed.messageId == "<1234@example.org>")
            #expect(parsed.date == "Fri, 15 Jan 2027 08:00:00 +0000")
            #expect(parsed.from == "Konto <accounts@example.org>" && parsed.to == "ada@example.org")
        }
    }

    @Test("no header injection: a subject or a sender name with line breaks stays one header; addresses with them are refused")
    func headerInjection() async throws {
        let hostile = "Hello\r\nBcc: evil@example.com\r\n\r\nInjected body"
        let parsed = try await Self.parse(try Self.message(subject: hostile, text: "body", fromName: "Eve\nBcc: evil@example.com").rendered())
        #expect(Set(parsed.headers) == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Content-Type"], "\(parsed.headers)")
        #expect(parsed.subject == "Hello  Bcc: evil@example.com    Injected body", "the value is kept, as text on one line: \(parsed.subject)")
        // One address whose name holds the text (Python quotes the name's colon and `@` when it writes it back).
        #expect(parsed.from == #""Eve Bcc: evil@example.com" <accounts@example.org>"#, "\(parsed.from)")
        #expect(parsed.text == "body" || parsed.text == "body\r\n" || parsed.text == "body\n")
        for bad in ["ada@example.org\r\nBcc: evil@example.com", "ada@example.org>", "<ada@example.org", "ada @example.org", "ada@exa mple.org",
                    "ada", "@example.org", "ada@", "a@b@c", "ada@example.org,eve@example.com", "åsa@example.org", String(repeating: "a", count: 65) + "@example.org",
                    "ada..b@example.org", ".ada@example.org", "ada@.example.org", "ada@example..org", "ada@example.org."] {
            #expect(throws: MailError.self, "\(bad.debugDescription)") { try MailAddress(bad) }
        }
        #expect(try MailAddress("ada.lovelace+konto@mail.example.org").value == "ada.lovelace+konto@mail.example.org")
    }

    @Test("quoted-printable: every line within 76 characters, the encoded text decodes to the original (against a straightforward decoder)")
    func quotedPrintable() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab .=\t\r\nÅé👋-_") + [" "]
        for _ in 0..<300 {
            let text = String((0..<Int.random(in: 0...400, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            let encoded = MIMEEncoding.quotedPrintable(text)
            let lines = encoded.components(separatedBy: "\r\n")
            #expect(lines.allSatisfy { $0.count <= 76 && !$0.hasPrefix(".") && !$0.hasSuffix(" ") && !$0.hasSuffix("\t") }, "\(encoded.debugDescription)")
            // The straightforward decoder: soft breaks out, =XX to its byte.
            var bytes: [UInt8] = []
            var characters = Array(encoded.replacingOccurrences(of: "=\r\n", with: "").utf8)[...]
            while let byte = characters.popFirst() {
                if byte == UInt8(ascii: "="), characters.count >= 2, let value = UInt8(String(decoding: characters.prefix(2), as: UTF8.self), radix: 16) {
                    bytes.append(value)
                    characters = characters.dropFirst(2)
                } else {
                    bytes.append(byte)
                }
            }
            let expected = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
            #expect(String(decoding: bytes, as: UTF8.self) == expected)
        }
    }
}
