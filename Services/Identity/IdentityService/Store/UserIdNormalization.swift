import Foundation
import KontoModel

/// How userIds are compared: trimmed, Unicode-normalized (NFC), and for email addresses case-insensitively, so
/// `Leland@Stanford.edu` and `leland@stanford.edu ` are one account. The userId is stored as given (trimmed).
enum UserIdNormalization {
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
