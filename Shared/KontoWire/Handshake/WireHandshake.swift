import Crypto

/// The pure parts of the challenge–response handshake.
public enum WireHandshake {
    /// The proof a client sends: HMAC-SHA256(secret, nonce ‖ UTF-8(serviceName)).
    /// Binding the name stops a captured proof from being replayed under another identity.
    public static func mac(secret: WireSecret, nonce: [UInt8], serviceName: String) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: secret.key)
        hmac.update(data: nonce)
        hmac.update(data: Array(serviceName.utf8))
        return Array(hmac.finalize())
    }

    /// Checks a client's proof in constant time.
    public static func isValid(mac: [UInt8], secret: WireSecret, nonce: [UInt8], serviceName: String) -> Bool {
        var message = nonce
        message.append(contentsOf: serviceName.utf8)
        return HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: secret.key)
    }

    /// The highest version both sides speak, or nil.
    public static func negotiateVersion(client: [UInt8], server: [UInt8]) -> UInt8? {
        Set(client).intersection(server).max()
    }

    /// A fresh random nonce for a challenge.
    public static func makeNonce() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<WireHello.Challenge.nonceSize).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
