import Foundation
import KontoModel

/// How userIds are compared: trimmed, Unicode-normalized (NFC), and for email addresses case-insensitively, so
/// `Leland@Stanford.edu` and `leland@stanford.edu ` are one account. The userId is stored as given (trimmed).
enum UserIdNormalization {
    /// The longest userId accepted, in characters (Unicode scalars, as JSON Schema's `maxLength` counts them; an
    /// email address has at most 254): longer ones are refused before they reach an index (at most 1,280 bytes, well
    /// within a btree entry).
    static let maximumCharacters = 320

    static let tooLongField = AccountFieldError(key: UserIdKey.identifier, code: .valueTooLarge, message: "Use at most \(maximumCharacters) characters.")

    static func acceptsLength(of userId: String) -> Bool {
        userId.utf8.count <= 4 * maximumCharacters && userId.unicodeScalars.count <= maximumCharacters
    }

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
