/// A secret (a password) on its way between services.
///
/// It encodes only for an encoder that allows secrets (``Swift/CodingUserInfoKey/accountDetailsIncludeSecrets``,
/// which KontoContracts sets for the methods declared to carry them), and throws otherwise: a secret put in any
/// other message fails loudly instead of leaving the service. It never prints.
public struct SecretString: Sendable, Codable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret itself; read it only to hash or verify it.
    public let value: String

    public init(_ value: String) {
        self.value = value
    }

    /// Its length in UTF-8 bytes, which a service may check before doing costly work.
    public var utf8Count: Int { value.utf8.count }

    public init(from decoder: any Decoder) throws {
        self.value = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        guard encoder.userInfo[.accountDetailsIncludeSecrets] as? Bool == true else {
            throw EncodingError.invalidValue(
                "<redacted>",
                .init(codingPath: encoder.codingPath, debugDescription: "A secret can only be encoded for a message declared to carry secrets.")
            )
        }
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public var description: String { "SecretString(<redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
