/// An account operation that was refused, with a stable ``Code`` clients can switch on.
///
/// Messages and field errors never carry submitted values, so a password can never leak through an error.
public struct AccountError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// A stable code such as `account.validationFailed`.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The userId (or another unique credential) belongs to another account.
        public static let credentialsTaken = Code(rawValue: "account.credentialsTaken")
        /// Wrong password or unknown user; deliberately the same code for both.
        public static let wrongCredentials = Code(rawValue: "account.wrongCredentials")
        /// One or more values were refused; see ``AccountError/fields``.
        public static let validationFailed = Code(rawValue: "account.validationFailed")
        public static let accountIdChanged = Code(rawValue: "account.accountIdChanged")
        public static let mutatingNonMutableAccountKeys = Code(rawValue: "account.mutatingNonMutableAccountKeys")
        public static let missingAccountValue = Code(rawValue: "account.missingAccountValue")
        public static let userIdNotRemovable = Code(rawValue: "account.userIdNotRemovable")
        /// A security-related operation needs a recent authentication.
        public static let reauthenticationRequired = Code(rawValue: "account.reauthenticationRequired")
        public static let notFound = Code(rawValue: "account.notFound")
        /// No valid session was presented.
        public static let unauthenticated = Code(rawValue: "account.unauthenticated")
        /// Too many failed attempts (per userId or client address); the error says when to retry.
        public static let throttled = Code(rawValue: "account.throttled")
        /// The details changed since the version the client read.
        public static let versionConflict = Code(rawValue: "account.versionConflict")
        /// Signing up with a session whose account already has credentials (only anonymous accounts are upgraded).
        public static let alreadySignedUp = Code(rawValue: "account.alreadySignedUp")
        /// A password reset token that is unknown, used or expired.
        public static let invalidResetToken = Code(rawValue: "account.invalidResetToken")
    }

    public let code: Code
    /// A human-readable summary.
    public let message: String
    /// One entry per refused field, all of them, not just the first.
    public let fields: [AccountFieldError]

    /// Creates an error; without a message, the code's standard message is used.
    public init(code: Code, message: String? = nil, fields: [AccountFieldError] = []) {
        self.code = code
        self.message = message ?? Self.standardMessage(for: code)
        self.fields = fields
    }

    public var description: String {
        var text = "\(code): \(message)"
        if !fields.isEmpty {
            text += " [" + fields.map(\.description).joined(separator: "; ") + "]"
        }
        return text
    }

    private static func standardMessage(for code: Code) -> String {
        switch code {
        case .credentialsTaken: "An account with these credentials already exists."
        case .wrongCredentials: "The user identifier or password is wrong."
        case .validationFailed: "Some account values are invalid."
        case .accountIdChanged: "The account identifier cannot be changed."
        case .mutatingNonMutableAccountKeys: "Some account values cannot be changed."
        case .missingAccountValue: "Some required account values are missing."
        case .userIdNotRemovable: "The user identifier cannot be removed."
        case .reauthenticationRequired: "This operation requires a recent authentication."
        case .notFound: "The account does not exist."
        case .unauthenticated: "Authentication is required."
        case .throttled: "Too many failed attempts; try again later."
        case .versionConflict: "The account changed in the meantime."
        case .invalidResetToken: "The password reset token is invalid or expired."
        case .alreadySignedUp: "The session's account already has credentials."
        default: code.rawValue
        }
    }
}
