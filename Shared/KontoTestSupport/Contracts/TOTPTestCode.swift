import Crypto
import Foundation

/// TOTP codes (RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps) as an authenticator app computes them from the base32
/// secret it was given, for the examples' `$totp` placeholder and tests that play the app. Written here apart from
/// Identity's own (which uses hummingbird-auth's OTP), so each checks the other.
public enum TOTPTestCode {
    /// The code for the step `offset` steps from `date`'s; nil for a secret that is not base32.
    public static func code(base32Secret: String, at date: Date = Date(), offset: Int64 = 0) -> String? {
        guard let key = decode(base32: base32Secret) else { return nil }
        let step = UInt64(max(0, Int64(date.timeIntervalSince1970) / 30 + offset))
        let counter = (0..<8).map { UInt8(truncatingIfNeeded: step >> (56 - 8 * $0)) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: counter, using: SymmetricKey(data: key)))
        let start = Int(mac[mac.count - 1] & 0x0F)
        let value = (UInt32(mac[start] & 0x7F) << 24) | (UInt32(mac[start + 1]) << 16) | (UInt32(mac[start + 2]) << 8) | UInt32(mac[start + 3])
        return String(format: "%06d", value % 1_000_000)
    }

    /// RFC 4648 base32 without padding; nil for another character.
    public static func decode(base32 text: String) -> [UInt8]? {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bytes: [UInt8] = []
        var buffer = 0
        var bits = 0
        for character in text.uppercased() where character != "=" {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = (buffer << 5) | value
            bits += 5
            if bits >= 8 {
                bytes.append(UInt8((buffer >> (bits - 8)) & 0xFF))
                bits -= 8
            }
        }
        return bytes
    }
}
