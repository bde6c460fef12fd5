import Foundation

/// A mail Identity asks Notifications' courier to send, carried by a `mailRequested` event written in the same
/// transaction as the change it tells of, so no mail is lost and none goes out for a change that was rolled back.
///
/// The producer decides who gets which message (it knows the account's address); the courier only renders the
/// message's templates and sends. A secret the mail carries (a reset token, a verification token, a sign-in code) is
/// sealed for the courier like a reset token (``SealedResetToken``); `values` hold what the templates show and is no
/// secret (e.g. a factor's type).
public struct MailRequest: Sendable, Hashable {
    /// Which message: names the templates the courier renders. A struct over the raw text, so a newer producer's
    /// message still travels (and dead-letters where no template knows it).
    public struct Message: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A link to the console's reset page with the token.
        public static let passwordReset = Message(rawValue: "passwordReset")
        /// A link that confirms the address, with the token, and a code (``MailRequest/sealedCode``) that does the same
        /// with the account's session (typed into the app that signed up).
        public static let verifyEmail = Message(rawValue: "verifyEmail")
        /// A one-time code that signs in.
        public static let signInCode = Message(rawValue: "signInCode")
        /// The password was changed (or reset).
        public static let passwordChanged = Message(rawValue: "passwordChanged")
        /// Sent to the previous address: the account's address was changed.
        public static let emailChanged = Message(rawValue: "emailChanged")
        /// A second factor was added (`values["factorType"]`).
        public static let factorAdded = Message(rawValue: "factorAdded")
        /// A second factor was removed (`values["factorType"]`).
        public static let factorRemoved = Message(rawValue: "factorRemoved")

        /// The address was proven for the first time and what the account gained before was removed
        /// (`values["removed"]`: what, as a list people read).
        public static let accessSecured = Message(rawValue: "accessSecured")

        /// Wrong second-factor answers in a row after the password (`values["failures"]`): whoever gave them knows
        /// the password. Sent at the first few and again when attempts go on past the lock.
        public static let secondFactorFailures = Message(rawValue: "secondFactorFailures")
        /// The authenticator app is locked after too many wrong answers (`values["failures"]`) until the owner
        /// recovers.
        public static let secondFactorLocked = Message(rawValue: "secondFactorLocked")

        /// A provider identity was linked to the account (`values["provider"]`; `values["automatic"]` "true" when it
        /// was linked by its verified address, not by the owner).
        public static let identityLinked = Message(rawValue: "identityLinked")
        /// A recovery code signed in (`values["remaining"]`: how many are left).
        public static let recoveryCodeUsed = Message(rawValue: "recoveryCodeUsed")
        /// A sign-in from a client (network address or browser) that never signed in to the account before
        /// (`values["method"]`: how, as people read it).
        public static let newSignIn = Message(rawValue: "newSignIn")

        public static let all: [Message] = [
            .passwordReset, .verifyEmail, .signInCode, .passwordChanged, .emailChanged, .factorAdded, .factorRemoved, .accessSecured,
            .secondFactorFailures, .secondFactorLocked, .identityLinked, .recoveryCodeUsed, .newSignIn,
        ]
    }

    public var message: Message
    /// The recipient's address, as the account holds it.
    public var to: String
    /// The secret the mail carries, sealed for the courier; nil for a notice.
    public var sealedToken: SealedResetToken?
    /// A second secret, sealed the same way: the code of a `verifyEmail` mail, beside its link's token. Nil for every
    /// other message, and in mails asked for before codes were sent.
    public var sealedCode: SealedResetToken?
    /// When the secret stops working.
    public var expiresAt: Date?
    /// What the templates show besides the secret; never a secret.
    public var values: [String: String]

    public init(
        message: Message, to: String, sealedToken: SealedResetToken? = nil, sealedCode: SealedResetToken? = nil, expiresAt: Date? = nil, values: [String: String] = [:]
    ) {
        self.message = message
        self.to = to
        self.sealedToken = sealedToken
        self.sealedCode = sealedCode
        // Whole milliseconds, so the time survives its ISO 8601 encoding unchanged (as an event's own time).
        self.expiresAt = expiresAt.map { Timestamp(milliseconds: Timestamp($0).milliseconds).date }
        self.values = values
    }
}
