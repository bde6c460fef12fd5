import ExtrasBase64

/// base64url without padding, as WebAuthn's JSON forms write binary members (swift-webauthn's `URLEncodedBase64`).
/// Decoding also takes padded text (some clients pad clientDataJSON).
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64.encodeToString(bytes: bytes, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    public static func decode(_ text: String, _ what: String) throws(WebAuthnError) -> [UInt8] {
        var text = Substring(text)
        while text.hasSuffix("=") { text = text.dropLast() }
        do {
            return try Base64.decode(string: String(text), options: [.base64UrlAlphabet, .omitPaddingCharacter])
        } catch {
            throw WebAuthnError(.malformed, "\(what) is not base64url")
        }
    }

    /// The bytes; nil when the text is not base64url.
    public static func decodeIfValid(_ text: String) -> [UInt8]? {
        try? decode(text, "")
    }
}
