import Crypto
import Foundation
import KontoWebAuthn

/// Session and password-reset tokens: 256 random bits from the system's CSPRNG, base64url without padding
/// (43 characters). Only their SHA-256 is ever stored, so a leaked table cannot be replayed.
enum SecretToken {
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }

    /// SHA-256 of the token's UTF-8 bytes. Lookups go by this digest through a unique index, so no token is ever
    /// compared byte by byte in Swift (nothing to time).
    static func hash(_ token: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(token.utf8)))
    }
}
