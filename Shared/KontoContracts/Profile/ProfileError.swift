import KontoModel

/// A refused or failed Profile operation, with a stable ``Code`` and whether retrying may help.
///
/// Account-model refusals keep their `account.*` codes and field errors (see ``init(_:)``); the Profile service adds
/// its own `profile.*` codes. Messages and field errors never carry submitted or stored values.
public struct ProfileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Profile answers with account-model codes and its own (`profile.*`), all declared in KontoErrors.
    public typealias Code = KontoErrorCode

    public let code: Code
    public let message: String
    /// Every refused field, for validation and limit errors.
    public let fields: [AccountFieldError]
    /// Whether the same request may succeed later.
    public let isRetryable: Bool

    /// - Parameter isRetryable: by default the code's (``KontoErrorCode/isRetryable``).
    public init(code: Code, message: String, fields: [AccountFieldError] = [], isRetryable: Bool? = nil) {
        self.code = code
        self.message = message
        self.fields = fields
        self.isRetryable = isRetryable ?? code.isRetryable
    }

    /// The same refusal under its account-model code.
    public init(_ error: AccountError) {
        self.init(code: error.code, message: error.message, fields: error.fields)
    }

    public var description: String {
        var text = "\(code): \(message)"
        if isRetryable {
            text += " (retryable)"
        }
        if !fields.isEmpty {
            text += " [" + fields.map(\.description).joined(separator: "; ") + "]"
        }
        return text
    }

    // MARK: Standard errors

    public static func notFound() -> ProfileError {
        ProfileError(AccountError(code: .notFound))
    }

    public static func versionConflict(retryable: Bool = false, message: String? = nil) -> ProfileError {
        ProfileError(
            code: .versionConflict,
            message: message ?? AccountError(code: .versionConflict).message,
            isRetryable: retryable
        )
    }

    public static let alreadyExists = ProfileError(code: .profileAlreadyExists, message: "The account already has details.")

    public static let storageUnavailable = ProfileError(
        code: .profileStorageUnavailable,
        message: "The profile storage is unavailable; try again later."
    )

    public static let storageFailure = ProfileError(code: .profileStorageFailure, message: "The profile storage failed.")
}
