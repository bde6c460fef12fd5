import Crypto
import Foundation
import KontoWire

/// Seals the signing secret of an endpoint added through the admin API before it is stored, so a dump of
/// Notifications' database alone signs nothing: AES-GCM under a key derived from the key Notifications holds (the
/// mail seal key, `KONTO_MAIL_SEAL_KEY`) for this purpose alone, bound to the endpoint's name (a sealed secret moved
/// to another row does not open).
public struct WebhookSecretSeal: Sendable {
    private let key: SymmetricKey

    public init(secret: WireSecret) {
        key = secret.derivedKey(purpose: "konto.notifications.webhook-secret.v1")
    }

    /// A seal with a random key, for a store whose endpoints live no longer than it (tests, memory).
    public static func random() -> WebhookSecretSeal {
        WebhookSecretSeal(key: SymmetricKey(size: .bits256))
    }

    private init(key: SymmetricKey) {
        self.key = key
    }

    public func seal(_ secret: String, name: String) -> String {
        do {
            let box = try AES.GCM.seal(Array(secret.utf8), using: key, authenticating: Array(name.utf8))
            // `combined` is nil only for a nonce of another size than 12 bytes; seal(_:using:) makes 12-byte ones.
            guard let combined = box.combined else { preconditionFailure("AES-GCM box without its combined form") }
            return combined.base64EncodedString()
        } catch {
            // AES.GCM.seal fails only for a key that is not 128, 192 or 256 bits; the key here is 256.
            preconditionFailure("AES-GCM sealing failed: \(error)")
        }
    }

    /// The secret, or nil when the box was sealed under another key or for another name (or altered).
    public func open(_ sealed: String, name: String) -> String? {
        guard sealed.utf8.count <= 1_024, let data = Data(base64Encoded: sealed),
            let box = try? AES.GCM.SealedBox(combined: data),
            let plain = try? AES.GCM.open(box, using: key, authenticating: Array(name.utf8))
        else { return nil }
        return String(bytes: plain, encoding: .utf8)
    }
}
