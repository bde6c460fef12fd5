/// An address a mail is sent from or to, checked before it is written into any header or SMTP command: ASCII
/// `local@domain` (RFC 5321's dot-atom, with the characters RFC 5322 allows), no whitespace, control characters,
/// angle brackets or commas, at most 254 characters, so no value can end a header line or an SMTP command.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    public let value: String

    static let localCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~.")
    static let domainCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.")

    public init(_ text: String) throws(MailError) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.utf8.count <= 254, parts.count == 2,
              let local = parts.first, let domain = parts.last,
              (1...64).contains(local.count), !domain.isEmpty,
              local.allSatisfy(Self.localCharacters.contains), domain.allSatisfy(Self.domainCharacters.contains),
              !local.hasPrefix("."), !local.hasSuffix("."), !local.contains(".."),
              !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.hasPrefix("-"), !domain.contains("..")
        else {
            throw MailError(.invalidAddress, "not an address Konto sends mail to (local@domain, ASCII, up to 254 characters)")
        }
        value = text
    }

    public var description: String { value }
}
