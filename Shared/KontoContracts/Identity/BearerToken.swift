/// An opaque token a caller presents: a session token, or a password reset token.
///
/// It travels as a plain JSON string (services must hand sessions back to the Gateway), but never prints:
/// logging a request or a response cannot leak one. Identity stores only its SHA-256 hash.
public struct BearerToken: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The token itself; read it only to hash it or to hand it to its owner.
    public let value: String

    public init(_ value: String) {
        self.value = value
    }

    public init(from decoder: any Decoder) throws {
        self.value = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public var description: String { "BearerToken(<redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
