import Crypto
import KontoContracts
import KontoModel

/// Passkey challenges, issued without storage: 16 random bytes, the expiry, the ceremony and a MAC (HMAC-SHA256
/// under a key derived from the deployment's secret) over them and the account they are for. An unauthenticated
/// caller asking for login options costs no write; a challenge is made single-use when it is answered (its hash is
/// kept until it expires, ``IdentityStorage/consumePasskeyChallenge(hash:expiresAt:)``).
enum PasskeyChallenge {
    enum Ceremony: UInt8 {
        /// Making a passkey for a signed-in account.
        case registration = 1
        /// Signing in: passwordless (no account), or the second factor of an account's login.
        case assertion = 2
    }

    static let length = 16 + 8 + 1 + 16

    static func make(_ ceremony: Ceremony, accountId: String?, expiresAt: Timestamp, key: SymmetricKey) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }
        bytes += withUnsafeBytes(of: expiresAt.milliseconds.bigEndian, Array.init)
        bytes.append(ceremony.rawValue)
        return bytes + tag(bytes, accountId: accountId, key: key)
    }

    /// The challenge's expiry when it is one Konto made for this ceremony and account (nil: none) and has not
    /// expired at `now`; nil otherwise.
    static func open(_ bytes: [UInt8], _ ceremony: Ceremony, accountId: String?, at now: Timestamp, key: SymmetricKey) -> Timestamp? {
        guard bytes.count == length, bytes[24] == ceremony.rawValue else { return nil }
        let body = Array(bytes[0..<25])
        guard ConstantTime.equal(Array(bytes[25...]), tag(body, accountId: accountId, key: key)) else { return nil }
        let milliseconds = bytes[16..<24].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let expiresAt = Timestamp(milliseconds: milliseconds)
        return now < expiresAt ? expiresAt : nil
    }

    private static func tag(_ body: [UInt8], accountId: String?, key: SymmetricKey) -> [UInt8] {
        // The account is bound by the MAC, not carried: a zero byte keeps "no account" apart from any account ID.
        let account: [UInt8] = accountId.map { [1] + Array($0.utf8) } ?? [0]
        return Array(HMAC<SHA256>.authenticationCode(for: body + account, using: key).prefix(16))
    }
}
