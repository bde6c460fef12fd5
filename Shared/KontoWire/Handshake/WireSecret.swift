import Crypto

/// The shared secret that authenticates services to each other.
///
/// Wraps the key so that printing, logging or dumping a configuration never shows it.
public struct WireSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let key: SymmetricKey

    public init(_ secret: String) {
        self.key = SymmetricKey(data: Array(secret.utf8))
    }

    public init(bytes: [UInt8]) {
        self.key = SymmetricKey(data: bytes)
    }

    /// A key of its own for `purpose` (HMAC-SHA256 of the purpose under the secret), so one configured secret can
    /// sign other things (the web console's CSRF tokens) without those signatures ever serving as a wire proof.
    public func derivedKey(purpose: String) -> SymmetricKey {
        SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(purpose.utf8), using: key)))
    }

    public var description: String { "WireSecret(<redacted>)" }
    public var debugDescription: String { self.description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
