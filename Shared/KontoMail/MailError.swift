/// Why a mail could not be made or sent. `isPermanent`: retrying the same mail cannot succeed (an address the
/// server refuses, a 5xx), so it goes to the dead letters; otherwise it is retried with back-off.
public struct MailError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// An address that is not one (or would let a value end a header line).
        case invalidAddress
        /// The server's answer is not SMTP (or longer than any server's).
        case protocolViolation
        /// The server refused for now (4xx), or the connection failed: try again later.
        case transient
        /// The server refused for good (5xx).
        case permanent
        /// STARTTLS is required and the server does not offer it, or the credentials are refused.
        case configuration
    }

    public var code: Code
    /// What happened, never the message's body or a password.
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var isPermanent: Bool { code == .permanent || code == .invalidAddress }
    public var description: String { "mail.\(code.rawValue): \(detail)" }
}
