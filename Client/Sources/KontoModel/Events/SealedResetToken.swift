/// A password-reset token as it travels in a `passwordResetRequested` event: sealed (AES-GCM, KontoContracts'
/// `ResetTokenSeal`) for the channel that delivers it, so the outbox, the event store, dead letters and feeds never
/// hold a usable token. Encoded as the sealed box's base64url text.
public struct SealedResetToken: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The sealed box (nonce, ciphertext and tag), base64url without padding.
    public let box: String

    public init(box: String) {
        self.box = box
    }

    public init(from decoder: any Decoder) throws {
        box = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(box)
    }

    /// Never the box: even sealed, a token is nothing to log.
    public var description: String { "<sealed>" }
}
