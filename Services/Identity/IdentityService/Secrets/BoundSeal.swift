import Crypto
import Foundation

/// AES-GCM under one of the deployment's derived keys, with what the sealed bytes belong to (an account and factor,
/// an account and identity) authenticated alongside: a sealed value moved to another row does not open. The one
/// sealing of Identity's secrets at rest (``FactorSecretBox``, ``ProviderTokenBox``).
enum BoundSeal {
    static func seal(_ bytes: some DataProtocol, key: SymmetricKey, binding: String) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(bytes, using: key, authenticating: Array(binding.utf8))
            // `combined` is nil only for nonces of another size than 12 bytes; seal(_:using:) makes 12-byte ones.
            guard let combined = box.combined else { preconditionFailure("AES-GCM box without its combined form") }
            return Array(combined)
        } catch {
            // AES.GCM.seal fails only for a key that is not 128, 192 or 256 bits; the derived keys are 256.
            preconditionFailure("AES-GCM sealing failed: \(error)")
        }
    }

    /// The bytes; nil when they were not sealed under `key` for `binding`.
    static func open(_ sealed: [UInt8], key: SymmetricKey, binding: String) -> [UInt8]? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
              let plain = try? AES.GCM.open(box, using: key, authenticating: Array(binding.utf8))
        else { return nil }
        return Array(plain)
    }
}
