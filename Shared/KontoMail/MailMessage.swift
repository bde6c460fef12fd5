import Foundation

/// One mail: from, to, a subject, and the text and HTML of one message, rendered as correct MIME
/// (`multipart/alternative`, UTF-8 in quoted-printable, an encoded subject, a Message-ID and a Date).
public struct MailMessage: Sendable, Equatable {
    public var from: MailAddress
    /// Shown beside the sender's address (encoded like the subject).
    public var fromName: String?
    public var to: MailAddress
    public var subject: String
    public var text: String
    public var html: String
    /// `<…@domain>`; unique per mail (a retry sends the same one, so a receiver can tell a repeat).
    public var messageId: String
    public var date: Date
    /// What the reader is to act on, the link (reset, verification) or the sign-in code, when the mail carries one;
    /// not part of what is sent (the text and HTML carry it), for a transport that shows rather than delivers.
    public var link: String?
    public var code: String?

    public init(from: MailAddress, fromName: String? = nil, to: MailAddress, subject: String, text: String, html: String, messageId: String, date: Date) {
        self.from = from
        self.fromName = fromName
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.messageId = messageId
        self.date = date
    }

    /// A Message-ID for a mail from `from`'s domain.
    public static func newMessageId(from: MailAddress) -> String {
        let domain = from.value.split(separator: "@").last.map(String.init) ?? "konto.invalid"
        return "<\(UUID().uuidString.lowercased())@\(domain)>"
    }

    /// The message as SMTP's DATA sends it, lines ending in CRLF (without the terminating `.`).
    public func rendered(boundary: String = "konto-" + UUID().uuidString.lowercased()) -> [UInt8] {
        let sender = fromName.map { MIMEEncoding.displayName($0) + " <\(from.value)>" } ?? from.value
        let headers = [
            "From: \(sender)",
            "To: \(to.value)",
            "Subject: \(MIMEEncoding.headerValue(subject))",
            "Date: \(MIMEEncoding.date(date))",
            "Message-ID: \(messageId)",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
        ]
        var body = headers.joined(separator: "\r\n") + "\r\n\r\n"
        for (type, content) in [("text/plain", text), ("text/html", html)] {
            body += "--\(boundary)\r\n"
            body += "Content-Type: \(type); charset=utf-8\r\n"
            body += "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
            body += MIMEEncoding.quotedPrintable(content) + "\r\n"
        }
        body += "--\(boundary)--\r\n"
        return Array(body.utf8)
    }
}
