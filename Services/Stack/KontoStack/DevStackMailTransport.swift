import KontoMail
import NotificationService

extension DevStack {
    /// A mail the dev stack did not send (no mail server configured): to whom, about what, and the link or code it
    /// carries, for the terminal.
    public struct Mail: Sendable, Equatable {
        public var to: String
        public var subject: String
        public var link: String?
        public var code: String?
    }
}

/// The dev stack's courier transport without a mail server: each mail is handed to `show` (the terminal) instead of
/// being sent, so a newcomer can try the password reset, verification and sign-in codes without one. Never used by
/// a deployment: the separate Notifications process sends over SMTP or not at all.
struct DevStackMailTransport: MailTransport {
    let show: @Sendable (DevStack.Mail) -> Void

    func send(_ message: MailMessage) async throws(MailError) {
        show(DevStack.Mail(to: message.to.value, subject: message.subject, link: message.link, code: message.code))
    }

    func shutdown() async {}
}
