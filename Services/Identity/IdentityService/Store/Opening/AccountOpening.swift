import KontoModel

/// What opens an account (``AccountOpener/openAccount(_:at:)``): its first credential, its userId and checked details,
/// and the anonymous session it upgrades, if any. Password sign-up, provider sign-up and both anonymous upgrades are
/// each one of these.
struct AccountOpening {
    enum FirstCredential {
        /// A password, as its hash (a PHC string).
        case password(hash: String)
        /// None yet (an operator's account): its owner sets a password through a reset, or signs in with an emailed code
        /// or a provider.
        case none
        /// An identity a provider verified, linked as the account's way in.
        case external(IdentityProvider, VerifiedIdentity, ProviderTokenBox.RefreshToken?)
    }

    var credential: FirstCredential
    /// As given (trimmed), and as uniqueness compares it.
    var userId: String
    var normalizedUserId: String
    /// Profile's part, checked (``AccountOpener/checkSignUp(userId:password:details:)``).
    var details: AccountDetails
    /// The userId is an address the provider vouched for: a new account has it verified from the start, and no link
    /// is mailed.
    var addressVerified = false
    /// The anonymous session whose account signs up (it keeps its accountId and creation); nil for a new account.
    var upgrading: StoredSession?
    /// The signing-up client's digests (``SessionAuthority/clientHashes(address:device:)``), remembered as the owner's.
    var clients: [[UInt8]] = []
    /// Whether the opening signs in (every sign-up does; an operator's account does not).
    var startsSession = true
    /// Whether an unverified address is mailed its verification link (an operator's import is not mailed).
    var mailsVerification = true
}
