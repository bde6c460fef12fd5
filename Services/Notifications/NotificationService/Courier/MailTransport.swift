import KontoMail

/// Where the courier hands a composed mail: ``SMTPClient`` in every deployment; the dev stack, without a mail server,
/// shows each mail's link or code in its terminal instead, so reset and verification can be tried without one.
public protocol MailTransport: Sendable {
    /// Sends `message`, or throws the ``MailError`` that says whether to try again.
    func send(_ message: MailMessage) async throws(MailError)
    /// Ends what the transport holds open; called once, when the courier stops.
    func shutdown() async
}

extension SMTPClient: MailTransport {}
