import Foundation
import KontoModel

/// How userIds are compared: trimmed, Unicode-normalized (NFC), and for email addresses case-insensitively, so
/// `Leland@Stanford.edu` and `leland@stanford.edu ` are one account. The userId is stored as given (trimmed).
enum UserIdNormalization {
    /// The longest userId accepted (an email address has at most 254 characters); longer ones are refused before
    /// they reach an index.
    static let maximumBytes = 320

    static let tooLongField = AccountFieldError(key: UserIdKey.identifier, code: .valueTooLarge, message: "Use at most \(maximumBytes) bytes.")

    static func trimmed(_ userId: String) -> String {
        userId.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func normalized(_ userId: String, type: UserIdType) -> String {
        let composed = trimmed(userId).precomposedStringWithCanonicalMapping
        return switch type {
        case .emailAddress: composed.lowercased()
        case .username: composed
        }
    }
}
