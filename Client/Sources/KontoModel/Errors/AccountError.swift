@_exported import KontoErrors

/// An account operation that was refused, with a stable ``Code`` clients can switch on.
///
/// Messages and field errors never carry submitted values, so a password can never leak through an error.
public struct AccountError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// A stable code such as `account.validationFailed` (declared with every other code in KontoErrors).
    public typealias Code = KontoErrorCode

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
        case .invalidVerificationToken: "The verification link is invalid, used or expired."
        case .emailNotVerified: "Confirm your email address first: open the link sent to it, or ask for a new one."
        case .secondFactorRequired: "This operation requires a recent authentication with the second factor."
        case .wrongSecondFactor: "The code is wrong, or was used already."
        case .invalidChallenge: "The login challenge is invalid, used or expired; log in again."
        case .factorLocked: "Too many wrong codes: the authenticator app is locked. Use a recovery code or a passkey, or reset your password through the mail."
        case .factorNotFound: "The account has no such second factor."
        case .sessionNotFound: "The account has no such session."
        case .invalidIdentityToken: "The identity token was refused."
        case .identityNotFound: "The account has no such linked identity."
        case .applicationNotFound: "No such application has access to the account."
        case .lastSignInMethod: "This is the account's only way to sign in: set a password or link another identity first."
        case .alreadySignedUp: "The session's account already has credentials."
        default: code.rawValue
        }
    }
}
