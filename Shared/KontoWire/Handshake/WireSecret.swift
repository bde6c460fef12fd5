import Crypto
import Foundation

/// The secret that authenticates services to each other: the deployment's root secret, or one calling service's
/// own key derived from it.
///
/// Every handshake runs under the caller's key, `HMAC-SHA256(root, "konto.wire.peer.v1:" ‖ serviceName)`: a server
/// holds the root and derives the key of whoever calls; a process that only calls (the gateway) can be given just
/// its own key (``init(peerKey:for:)``), with which it can speak as itself and as no one else.
///
/// Wraps the key so that printing, logging or dumping a configuration never shows it.
public struct WireSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let key: SymmetricKey
    /// The service this is the key of, for a peer key; nil for the root secret.
    public let peer: String?

    public init(_ secret: String) {
        self.key = SymmetricKey(data: Array(secret.utf8))
        self.peer = nil
    }

    public init(bytes: [UInt8]) {
        self.key = SymmetricKey(data: bytes)
        self.peer = nil
    }

    /// One calling service's key (32 bytes, as ``peerKeyBytes(for:)`` gives it), for a process that is not to hold
    /// the root secret.
    public init(peerKey bytes: [UInt8], for serviceName: String) {
        self.key = SymmetricKey(data: bytes)
        self.peer = serviceName
    }

    /// The key `serviceName` authenticates with: derived from the root, or this peer key itself (a peer key of
    /// another service derives nothing: its handshakes fail as they should).
    public func key(forPeer serviceName: String) -> WireSecret {
        guard peer == nil else { return self }
        return WireSecret(peerKey: peerKeyBytes(for: serviceName), for: serviceName)
    }

    /// The bytes of hexadecimal text (either case), or nil.
    public static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// The bytes of `serviceName`'s key, to hand to that service alone. Only from the root.
    public func peerKeyBytes(for serviceName: String) -> [UInt8] {
        precondition(peer == nil, "peer keys derive from the root secret")
        return Array(HMAC<SHA256>.authenticationCode(for: Array(("konto.wire.peer.v1:" + serviceName).utf8), using: key))
    }

    /// ``peerKeyBytes(for:)`` as the 64 hex digits a process is configured with (`KONTO_GATEWAY_WIRE_KEY`).
    public func peerKeyHex(for serviceName: String) -> String {
        peerKeyBytes(for: serviceName).map { String(format: "%02x", $0) }.joined()
    }

    /// A key of its own for `purpose` (HMAC-SHA256 of the purpose under the secret), so one configured secret can
    /// sign other things (the web console's CSRF tokens) without those signatures ever serving as a wire proof.
    public func derivedKey(purpose: String) -> SymmetricKey {
        SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(purpose.utf8), using: key)))
    }

    public var description: String { peer.map { "WireSecret(peer \($0), <redacted>)" } ?? "WireSecret(<redacted>)" }
    public var debugDescription: String { self.description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
