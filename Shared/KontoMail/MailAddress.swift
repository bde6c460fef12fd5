import KontoModel

/// An address a mail is sent from or to, checked before it is written into any header or SMTP command
/// (KontoModel's ``EmailAddressSyntax``, which sign-up checks userIds against too): ASCII `local@domain`, no
/// whitespace, control characters, angle brackets or commas, at most 254 characters, so no value can end a header
/// line or an SMTP command.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    public init(_ text: String) throws(MailError) {
        guard EmailAddressSyntax.isDeliverable(text) else {
            throw MailError(.invalidAddress, "not an address Konto sends mail to (local@domain, ASCII, up to 254 characters)")
        }
        value = text
    }

    public var description: String { value }
}
