import Crypto
import Foundation

/// How Notifications signs a webhook request, and how a receiver checks it: Standard Webhooks 1.0
/// (https://www.standardwebhooks.com), so any of its libraries verifies Konto's deliveries.
///
/// Each POST carries `webhook-id` (the event id), `webhook-timestamp` (Unix seconds) and `webhook-signature`:
/// `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, one such entry per secret, separated by spaces (while a
/// secret is rotated, so a receiver holding either verifies). The signature covers the body and the timestamp, so a
/// receiver detects a changed body, and refuses a request whose timestamp is outside its tolerance (a replay).
public enum WebhookSignature {
    public static let idHeader = "webhook-id"
    public static let timestampHeader = "webhook-timestamp"
    public static let signatureHeader = "webhook-signature"
    /// How far a receiver should accept a timestamp from its own clock, by default (the specification's five minutes).
    public static let defaultTolerance: Duration = .seconds(300)

    /// The signature header's value: one `v1,<base64>` per secret, in the secrets' order, separated by spaces.
    public static func sign(secrets: [WebhookSecret], id: String, timestamp: Int64, body: some Sequence<UInt8>) -> String {
        let body = Array(body)
        return secrets.map { sign(secret: $0, id: id, timestamp: timestamp, body: body) }.joined(separator: " ")
    }

    /// One signature: `v1,<base64>`.
    public static func sign(secret: WebhookSecret, id: String, timestamp: Int64, body: some Sequence<UInt8>) -> String {
        "v1," + Data(mac(key: secret.key, id: id, timestamp: timestamp, body: body)).base64EncodedString()
    }

    /// Whether a received request is authentic and recent: the timestamp is within `tolerance` of `now`, and one of
    /// the header's `v1` signatures matches (compared in constant time). Entries of other versions or that cannot be
    /// read are skipped, as the specification asks.
    public static func verify(
        secret: WebhookSecret,
        id: String,
        timestamp: Int64,
        body: some Sequence<UInt8>,
        signature: String,
        now: Date = Date(),
        tolerance: Duration = defaultTolerance
    ) -> Bool {
        guard isRecent(timestamp, now: now, tolerance: tolerance) else { return false }
        let expected = Array(mac(key: secret.key, id: id, timestamp: timestamp, body: body))
        var matched = false
        for entry in signature.split(separator: " ", omittingEmptySubsequences: true) {
            guard entry.hasPrefix("v1,"), let received = Data(base64Encoded: String(entry.dropFirst(3))) else { continue }
            // Every entry is compared in full, so the time taken tells nothing about which or where one differs.
            matched = ConstantTime.equal(Array(received), expected) || matched
        }
        return matched
    }

    /// As above, with the secret as written (`whsec_<base64>`); false when it is not a usable secret.
    public static func verify(
        secret: String,
        id: String,
        timestamp: Int64,
        body: some Sequence<UInt8>,
        signature: String,
        now: Date = Date(),
        tolerance: Duration = defaultTolerance
    ) -> Bool {
        guard let secret = try? WebhookSecret(secret) else { return false }
        return verify(secret: secret, id: id, timestamp: timestamp, body: body, signature: signature, now: now, tolerance: tolerance)
    }

    /// Whether `timestamp` is within `tolerance` of `now`. Any Int64 may arrive in a header: the distance is computed
    /// with overflow reported (Int64.min − now overflows), never trapped.
    static func isRecent(_ timestamp: Int64, now: Date, tolerance: Duration) -> Bool {
        let seconds = now.timeIntervalSince1970.rounded(.down)
        guard let current = Int64(exactly: seconds) else { return false }
        let (distance, overflow) = current.subtractingReportingOverflow(timestamp)
        guard !overflow else { return false }
        let allowed = tolerance.components.seconds
        return allowed >= 0 && distance.magnitude <= UInt64(allowed)
    }

    private static func mac(key: SymmetricKey, id: String, timestamp: Int64, body: some Sequence<UInt8>) -> HashedAuthenticationCode<SHA256> {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: Array("\(id).\(timestamp).".utf8))
        hmac.update(data: Array(body))
        return hmac.finalize()
    }
}

/// A webhook signing secret as Standard Webhooks writes it: `whsec_` followed by the base64 (padded or not) of the
/// key, which is at least 24 random bytes (e.g. `whsec_$(openssl rand -base64 32)`). The HMAC key is the decoded bytes, not the text.
/// Never shown: its description and mirror leave the key out.
public struct WebhookSecret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public static let prefix = "whsec_"
    /// The fewest key bytes accepted: 192 bits, what Standard Webhooks' own libraries generate at the least.
    public static let minimumKeyBytes = 24

    let key: SymmetricKey
    private let bytes: [UInt8]

    /// Reads `whsec_<base64>`; throws when the prefix is missing, the rest is not base64, or it decodes to fewer
    /// than ``minimumKeyBytes`` bytes. The error never repeats the text.
    public init(_ text: String) throws(WebhookSecretError) {
        guard text.hasPrefix(Self.prefix) else { throw WebhookSecretError(.missingPrefix) }
        var encoded = String(text.dropFirst(Self.prefix.count))
        // Unpadded base64 is accepted too, as Standard Webhooks' own libraries do (secrets are copied between systems).
        if encoded.utf8.count % 4 >= 2 {
            encoded += String(repeating: "=", count: 4 - encoded.utf8.count % 4)
        }
        guard let decoded = Data(base64Encoded: encoded) else {
            throw WebhookSecretError(.notBase64)
        }
        guard decoded.count >= Self.minimumKeyBytes else { throw WebhookSecretError(.tooShort) }
        self.bytes = Array(decoded)
        self.key = SymmetricKey(data: decoded)
    }

    public static func == (left: WebhookSecret, right: WebhookSecret) -> Bool { left.bytes == right.bytes }

    public var description: String { "WebhookSecret(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: []) }
}

/// Why a text is not a usable ``WebhookSecret``, with a stable code; never carries the text itself.
public struct WebhookSecretError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public var description: String { rawValue }

        public static let missingPrefix = Code(rawValue: "webhooks.secretMissingPrefix")
        public static let notBase64 = Code(rawValue: "webhooks.secretNotBase64")
        public static let tooShort = Code(rawValue: "webhooks.secretTooShort")
    }

    public let code: Code

    public init(_ code: Code) {
        self.code = code
    }

    public var message: String {
        switch code {
        case .missingPrefix: "does not start with whsec_"
        case .notBase64: "is not whsec_ followed by base64"
        case .tooShort: "decodes to fewer than \(WebhookSecret.minimumKeyBytes) bytes"
        default: code.rawValue
        }
    }

    public var description: String { "\(code): secret \(message)" }
}
