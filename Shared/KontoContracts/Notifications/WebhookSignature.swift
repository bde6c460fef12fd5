import Crypto
import Foundation

/// How Notifications signs a webhook request, and how a receiver checks it (as Stripe and Svix do).
///
/// Each POST carries the event id, a Unix timestamp and `v1=<hex HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>`.
/// The signature covers the body and the timestamp, so a receiver detects a changed body, and refuses a request
/// whose timestamp is older than its tolerance (a replay of a captured request).
public enum WebhookSignature {
    public static let idHeader = "Konto-Webhook-Id"
    public static let timestampHeader = "Konto-Webhook-Timestamp"
    public static let signatureHeader = "Konto-Webhook-Signature"
    /// How far a receiver should accept a timestamp from its own clock, by default.
    public static let defaultTolerance: Duration = .seconds(300)

    /// The signature header's value.
    public static func sign(secret: String, id: String, timestamp: Int64, body: some Sequence<UInt8>) -> String {
        "v1=" + mac(secret: secret, id: id, timestamp: timestamp, body: body).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether a received request is authentic and recent: the signature matches (compared in constant time) and the
    /// timestamp is within `tolerance` of `now`.
    public static func verify(
        secret: String,
        id: String,
        timestamp: Int64,
        body: some Sequence<UInt8>,
        signature: String,
        now: Date = Date(),
        tolerance: Duration = defaultTolerance
    ) -> Bool {
        guard abs(Int64(now.timeIntervalSince1970) - timestamp) <= tolerance.components.seconds else { return false }
        guard signature.hasPrefix("v1="), let received = bytes(hex: signature.dropFirst(3)) else { return false }
        let expected = Array(mac(secret: secret, id: id, timestamp: timestamp, body: body))
        guard received.count == expected.count else { return false }
        // Constant time: every byte is compared whatever the first difference.
        var difference: UInt8 = 0
        for (left, right) in zip(received, expected) {
            difference |= left ^ right
        }
        return difference == 0
    }

    private static func mac(secret: String, id: String, timestamp: Int64, body: some Sequence<UInt8>) -> HashedAuthenticationCode<SHA256> {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
        hmac.update(data: Array("\(id).\(timestamp).".utf8))
        hmac.update(data: Array(body))
        return hmac.finalize()
    }

    private static func bytes(hex: Substring) -> [UInt8]? {
        guard hex.utf8.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
