import Foundation

/// Something that happened to an account, the server-side form of SpeziAccount's account notifications.
///
/// Encoded flat: `{"id", "type", "time", "accountId", …payload}`, with `time` as an ISO 8601 timestamp in UTC
/// with milliseconds. Consumers deduplicate by ``id``.
public struct AccountEvent: Sendable, Equatable, Identifiable {
    /// What happened, with its payload.
    public enum Kind: Sendable, Equatable {
        /// An account was associated with a session: signup or login. Thin: whoever needs the details fetches them.
        case associatedAccount
        /// Details changed: the identifiers of the keys set or removed, sorted; the values are fetched, never carried
        /// (an event outlives the values it would carry, and reaches more readers than the account's details do).
        case detailsChanged(keys: [String])
        /// The session ended: logout.
        case disassociatingAccount
        /// The account is about to be deleted; storage providers remove its data.
        case deletingAccount
        /// A reset was asked for; the token, sealed, goes to whoever delivers it (e.g. an email sender), the only one
        /// that opens it.
        case passwordResetRequested(userId: String, token: SealedResetToken, expiresAt: Date)
        case passwordChanged
        /// Carries both userIds: the mailer tells the previous address of the change, which cannot be fetched any
        /// more. An account's stream (docs/GATEWAY.md) leaves them out.
        case userIdChanged(previous: String, new: String)
        /// Sessions were ended (logout everywhere, password change or reset).
        case sessionsRevoked
        /// A second factor was enrolled (a TOTP confirmed, a passkey registered, recovery codes made): its id and type.
        case factorAdded(factorId: String, factorType: String)
        /// A second factor was removed; how many second factors the account has left (0: the password alone).
        case factorRemoved(factorId: String, factorType: String, remaining: Int)
        /// A recovery code was used to sign in or reauthenticate; how many unused ones are left.
        case recoveryCodeUsed(remaining: Int)
        /// The account's address (its userId) was confirmed by the link sent to it.
        case emailVerified
        /// An external identity (an OpenID Connect provider's, Apple's) was linked to the account: its id and provider.
        case identityLinked(identityId: String, provider: String)
        /// An external identity was unlinked (by its owner).
        case identityUnlinked(identityId: String, provider: String)
        /// An operator disabled the account: every session ended, and no sign-in succeeds until it is enabled.
        case accountDisabled
        /// An operator enabled the account again.
        case accountEnabled
        /// A mail for Notifications' courier to send (``MailRequest``): internal, never on an account's stream.
        case mailRequested(MailRequest)

        /// The stable type name on the wire.
        public var name: String {
            switch self {
            case .associatedAccount: "associatedAccount"
            case .detailsChanged: "detailsChanged"
            case .disassociatingAccount: "disassociatingAccount"
            case .deletingAccount: "deletingAccount"
            case .passwordResetRequested: "passwordResetRequested"
            case .passwordChanged: "passwordChanged"
            case .userIdChanged: "userIdChanged"
            case .sessionsRevoked: "sessionsRevoked"
            case .factorAdded: "factorAdded"
            case .factorRemoved: "factorRemoved"
            case .recoveryCodeUsed: "recoveryCodeUsed"
            case .emailVerified: "emailVerified"
            case .identityLinked: "identityLinked"
            case .identityUnlinked: "identityUnlinked"
            case .accountDisabled: "accountDisabled"
            case .accountEnabled: "accountEnabled"
            case .mailRequested: "mailRequested"
            }
        }
    }

    /// Unique per event, for deduplication.
    public let id: UUID
    /// When it happened, to the millisecond.
    public let time: Date
    public let accountId: String
    public let kind: Kind

    /// Creates an event; `time` is rounded to milliseconds so it survives its ISO 8601 encoding unchanged.
    public init(id: UUID = UUID(), time: Date = Date(), accountId: String, kind: Kind) {
        self.id = id
        self.time = Self.date(milliseconds: Self.milliseconds(time))
        self.accountId = accountId
        self.kind = kind
    }
}
