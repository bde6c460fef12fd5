import KontoModel

/// A refused or failed Profile operation, with a stable ``Code`` and whether retrying may help.
///
/// Account-model refusals keep their `account.*` codes and field errors (see ``init(_:)``); the Profile service adds
/// its own `profile.*` codes. Messages and field errors never carry submitted or stored values.
public struct ProfileError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public init(_ code: AccountError.Code) {
            self.rawValue = code.rawValue
        }

        public var description: String { rawValue }

        public static let notFound = Code(AccountError.Code.notFound)
        public static let versionConflict = Code(AccountError.Code.versionConflict)
        public static let validationFailed = Code(AccountError.Code.validationFailed)
        /// ``ProfileContract/create`` for an account that already has details.
        public static let alreadyExists = Code(rawValue: ProfileContract.ErrorCode.alreadyExists)
        /// One value's JSON encoding is over the service's value limit; the field names the key.
        public static let valueTooLarge = Code(rawValue: ProfileContract.ErrorCode.valueTooLarge)
        /// The account's JSON encoding would be over the service's account limit.
        public static let accountTooLarge = Code(rawValue: ProfileContract.ErrorCode.accountTooLarge)
        /// The database cannot be reached or did not answer in time; retryable.
        public static let storageUnavailable = Code(rawValue: ProfileContract.ErrorCode.storageUnavailable)
        /// An unexpected storage failure (e.g. an unreadable record); not retryable.
        public static let storageFailure = Code(rawValue: ProfileContract.ErrorCode.storageFailure)
    }

    public let code: Code
    public let message: String
    /// Every refused field, for validation and limit errors.
    public let fields: [AccountFieldError]
    /// Whether the same request may succeed later.
    public let isRetryable: Bool

    /// - Parameter isRetryable: by default what ``ErrorCatalog`` declares for the code.
    public init(code: Code, message: String, fields: [AccountFieldError] = [], isRetryable: Bool? = nil) {
        self.code = code
        self.message = message
        self.fields = fields
        self.isRetryable = isRetryable ?? ErrorCatalog.isRetryable(code.rawValue)
    }

    /// The same refusal under its account-model code.
    public init(_ error: AccountError) {
        self.init(code: Code(error.code), message: error.message, fields: error.fields)
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

    public static let alreadyExists = ProfileError(code: .alreadyExists, message: "The account already has details.")

    public static let storageUnavailable = ProfileError(
        code: .storageUnavailable,
        message: "The profile storage is unavailable; try again later."
    )

    public static let storageFailure = ProfileError(code: .storageFailure, message: "The profile storage failed.")
}
