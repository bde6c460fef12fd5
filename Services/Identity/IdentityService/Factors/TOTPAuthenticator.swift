import Crypto
import ExtrasBase64
import Foundation
import HummingbirdOTP
import KontoModel

/// TOTP (RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps) over hummingbird-auth's OTP.
///
/// Secrets are 32 characters of the base32 alphabet drawn from the system's CSPRNG (160 bits): HummingbirdOTP keys
/// the HMAC with a secret string's UTF-8 bytes, so the key is those 32 ASCII bytes, and what an authenticator app
/// is given (the otpauth URI's `secret`) is their base32 encoding, as the package writes it.
struct TOTPAuthenticator: Sendable {
    static let digits = 6
    static let stepSeconds: Int64 = 30
    /// Steps either side of the current one that are accepted (clock drift, a code typed as it changed).
    static let window: Int64 = 1
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    /// Shown in the authenticator app beside the account (the otpauth URI's issuer).
    var issuer: String

    /// A new secret.
    static func generateSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return String((0..<32).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// The step a time falls in.
    static func step(at time: Timestamp) -> Int64 {
        Int64((Double(time.milliseconds) / 1_000).rounded(.down)) / stepSeconds
    }

    /// The code of `step` (zero-padded to six digits).
    static func code(secret: String, step: Int64) -> String {
        let value = HOTP(secret: secret, length: digits).compute(counter: UInt64(max(0, step)))
        let text = String(value)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// The otpauth URI an authenticator app scans (`otpauth://totp/ISSUER:LABEL?secret=…&issuer=…`).
    func provisioningURI(secret: String, label: String) -> String {
        TOTP(secret: secret, length: Self.digits).createAuthenticatorURL(label: "\(issuer):\(label)", issuer: issuer)
    }

    /// The step whose code `code` is, within the window around `time`, the latest first; nil when none matches. The
    /// codes are compared in constant time, every candidate step always computed.
    static func matchingStep(of code: String, secret: String, at time: Timestamp) -> Int64? {
        let given = Array(code.utf8)
        guard given.count == digits, given.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        let now = step(at: time)
        var matched: Int64?
        for candidate in stride(from: now + window, through: now - window, by: -1) {
            let expected = Array(Self.code(secret: secret, step: candidate).utf8)
            // Constant-time: every byte compared, every step tried.
            var difference: UInt8 = 0
            for index in 0..<digits { difference |= expected[index] ^ given[index] }
            if difference == 0, matched == nil { matched = candidate }
        }
        return matched
    }
}

extension TOTPAuthenticator {
    /// The base32 form of a secret's key bytes (RFC 4648, no padding): what an authenticator app is given to type in.
    static func base32(_ secret: String) -> String {
        String(base32Encoding: secret.utf8, options: .omitPaddingCharacter)
    }
}
