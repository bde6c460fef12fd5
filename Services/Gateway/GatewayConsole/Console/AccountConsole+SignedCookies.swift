import Crypto
import Foundation

/// A flow's state kept in a cookie (a provider sign-in's, an authorization request's): JSON, base64url, and an HMAC
/// under the console's key bound to the cookie's purpose, so one purpose's value is never taken for another's and the
/// browser cannot change it. Signed, not encrypted: what is kept is the browser's own (its state, its request).
extension AccountConsole {
    func signedCookieValue(_ value: some Encodable, purpose: String) -> String {
        let payload = Self.base64URL(Array((try? JSONEncoder().encode(value)) ?? Data()))
        let mac = Self.base64URL(Array(HMAC<SHA256>.authenticationCode(for: Array((purpose + "\u{0}" + payload).utf8), using: csrfKey)))
        return payload + "." + mac
    }

    /// The value, when this console signed it for `purpose`; nil for anything else or anything longer than `limit`.
    func openSignedCookieValue<Value: Decodable>(_ text: String, as type: Value.Type, purpose: String, limit: Int) -> Value? {
        let parts = text.split(separator: ".")
        guard text.utf8.count <= limit, parts.count == 2, let mac = Self.bytes(base64URL: String(parts[1])),
              HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Array((purpose + "\u{0}" + parts[0]).utf8), using: csrfKey),
              let json = Self.bytes(base64URL: String(parts[0]), limit: limit)
        else { return nil }
        return try? JSONDecoder().decode(type, from: Data(json))
    }
}
