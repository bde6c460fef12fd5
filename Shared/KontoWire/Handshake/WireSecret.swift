import Crypto
import Foundation

/// What a process authenticates wire handshakes with: the deployment's root secret (development and tests only), one
/// calling service's own key, or one verifier a server holds for one caller.
///
/// Keys (docs/PROTOCOL.md, "Keys"):
/// - a caller's key `K(c) = HMAC-SHA256(root, "konto.wire.peer.v1:" ‖ c)`: held by the calling service `c` alone;
/// - the verifier of `c` at server `s`, `V(c, s) = HMAC-SHA256(K(c), "konto.wire.verifier.v1:" ‖ s)`: held by `s`.
///
/// Every handshake's proofs are MACs under `V(caller, server)`. A server holds only the verifiers of the callers it
/// accepts: with one it can speak as that caller to itself and to no other server, and it cannot work back to the
/// caller's key or to the root. A caller derives the verifier of each server it calls from its own key.
///
/// Wraps the key so that printing, logging or dumping a configuration never shows it.
public struct WireSecret: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public enum Kind: Sendable, Hashable {
        /// The deployment's root secret: derives every key.
        case root
        /// One calling service's key.
        case caller(String)
        /// The verifier of `caller` at `server`: proves exactly that handshake.
        case verifier(caller: String, server: String)
    }

    let key: SymmetricKey
    public let kind: Kind

    /// The service this is the key of, for a caller's key or a verifier; nil for the root secret.
    public var peer: String? {
        switch kind {
        case .root: nil
        case .caller(let name): name
        case .verifier(let caller, _): caller
        }
    }

    public init(_ secret: String) {
        self.key = SymmetricKey(data: Array(secret.utf8))
        self.kind = .root
    }

    public init(bytes: [UInt8]) {
        self.key = SymmetricKey(data: bytes)
        self.kind = .root
    }

    /// One calling service's key (32 bytes, as ``peerKeyBytes(for:)`` gives it), for a process that is not to hold
    /// the root secret.
    public init(peerKey bytes: [UInt8], for serviceName: String) {
        self.key = SymmetricKey(data: bytes)
        self.kind = .caller(serviceName)
    }

    /// The verifier of `caller` at `server` (32 bytes, as ``verifierBytes(caller:server:)`` gives it).
    public init(verifier bytes: [UInt8], caller: String, server: String) {
        self.key = SymmetricKey(data: bytes)
        self.kind = .verifier(caller: caller, server: server)
    }

    /// The key `serviceName` authenticates with: derived from the root, or this caller's key itself (another
    /// service's key or a verifier derives nothing: its handshakes fail as they should).
    public func key(forPeer serviceName: String) -> WireSecret {
        guard kind == .root else { return self }
        return WireSecret(peerKey: peerKeyBytes(for: serviceName), for: serviceName)
    }

    /// The key a handshake between `caller` and `server` is proven under, ``Kind/verifier(caller:server:)``: derived
    /// from the root or from the caller's own key, or this verifier itself. Anything else (another caller's key, a
    /// verifier of another pair) gives a key no server accepts, so the handshake fails as it should.
    public func proofKey(caller: String, server: String) -> WireSecret {
        switch kind {
        case .verifier:
            return self
        case .root:
            return key(forPeer: caller).proofKey(caller: caller, server: server)
        case .caller(let name):
            guard name == caller else { return self }
            return WireSecret(verifier: Self.mac("konto.wire.verifier.v1:" + server, key), caller: caller, server: server)
        }
    }

    /// The bytes of `caller`'s verifier at `server`, to hand to that server: from the root or the caller's own key.
    public func verifierBytes(caller: String, server: String) -> [UInt8] {
        let derived = proofKey(caller: caller, server: server)
        precondition(derived.kind == .verifier(caller: caller, server: server), "a verifier derives from the root or the caller's key")
        return derived.key.withUnsafeBytes { Array($0) }
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

    /// Lower-case hexadecimal text of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The bytes of `serviceName`'s key, to hand to that service alone. Only from the root.
    public func peerKeyBytes(for serviceName: String) -> [UInt8] {
        precondition(kind == .root, "peer keys derive from the root secret")
        return Self.mac("konto.wire.peer.v1:" + serviceName, key)
    }

    /// ``peerKeyBytes(for:)`` as the 64 hex digits a process is configured with (`KONTO_GATEWAY_WIRE_KEY`).
    public func peerKeyHex(for serviceName: String) -> String {
        Self.hex(peerKeyBytes(for: serviceName))
    }

    /// A key of its own for `purpose` (HMAC-SHA256 of the purpose under the secret), so one configured secret can
    /// sign other things (the web console's CSRF tokens) without those signatures ever serving as a wire proof.
    public func derivedKey(purpose: String) -> SymmetricKey {
        SymmetricKey(data: Self.mac(purpose, key))
    }

    private static func mac(_ message: String, _ key: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: key))
    }

    public var description: String {
        switch kind {
        case .root: "WireSecret(<redacted>)"
        case .caller(let name): "WireSecret(peer \(name), <redacted>)"
        case .verifier(let caller, let server): "WireSecret(verifier \(caller) at \(server), <redacted>)"
        }
    }
    public var debugDescription: String { self.description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}
