import Crypto
import Foundation

/// Recovery codes: ten single-use codes of 12 characters from a 32-letter alphabet without look-alikes (60 bits
/// each), shown as `xxxx-xxxx-xxxx`. Only an HMAC under Identity's data key is stored
/// (``FactorSecretBox/recoveryCodeDigest(_:accountId:)``): a dump without the key finds no code however fast the
/// search, and a lookup by digest compares nothing in Swift.
enum RecoveryCodes {
    static let count = 10
    /// 32 symbols (5 bits each): no i, l, o or 1.
    private static let alphabet = Array("abcdefghjkmnpqrstuvwxyz023456789")

    static func generate() -> [String] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in
            let characters = (0..<12).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
            return String(characters[0..<4]) + "-" + String(characters[4..<8]) + "-" + String(characters[8..<12])
        }
    }

    /// What a typed code is compared as: lower case, without spaces or dashes.
    static func normalized(_ code: String) -> String {
        String(code.lowercased().filter { !$0.isWhitespace && $0 != "-" })
    }

    /// The unkeyed SHA-256 codes made before the keyed digest were stored as: still accepted (once each) until the
    /// owner makes new codes, so nobody's saved codes stop working.
    static func legacyHash(_ code: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(("konto-recovery-code:" + normalized(code)).utf8)))
    }
}
