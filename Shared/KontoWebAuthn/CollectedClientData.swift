import Foundation

/// The client data a browser signs over (WebAuthn §5.8.1): what was asked (`type`), the challenge and the page's
/// origin. Other members (`topOrigin`, a browser's own hints) are ignored, as the specification asks.
struct CollectedClientData: Decodable, Sendable {
    var type: String
    var challenge: String
    var origin: String
    var crossOrigin: Bool?

    static func decode(_ bytes: [UInt8]) throws(WebAuthnError) -> CollectedClientData {
        do {
            return try JSONDecoder().decode(CollectedClientData.self, from: Data(bytes))
        } catch {
            throw WebAuthnError(.malformed, "clientDataJSON is not client data (type, challenge and origin)")
        }
    }
}
