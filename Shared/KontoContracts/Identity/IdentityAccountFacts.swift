import KontoModel

/// What Identity knows about an account, as one value: the session check, login and every sign-in answer carry it
/// whole, and ``AccountAssembler`` takes it whole. A fact Identity adds about an account (such as when it was created)
/// is added here, where Identity produces it (its stored credential's `facts`), and where the assembler puts it into
/// the account; no call site in between names it.
public struct IdentityAccountFacts: Codable, Sendable, Hashable {
    public var accountId: String
    /// As it was given; nil for an anonymous account.
    public var userId: String?
    public var isAnonymous: Bool
    /// Where userIds are email addresses: whether the account's was confirmed; nil for an account without one, and
    /// where userIds are usernames.
    public var emailVerified: Bool?
    /// Where userIds are usernames: the contact address (the `email` detail) last confirmed; the account's answer says
    /// `emailVerified` while its `email` still holds it (``AccountAssembler``).
    public var verifiedEmail: String?
    /// When the account was created (an upgraded anonymous account keeps its own). Optional: an older Identity's
    /// answer without it still decodes.
    public var createdAt: Timestamp?

    public init(
        accountId: String, userId: String?, isAnonymous: Bool, emailVerified: Bool? = nil, verifiedEmail: String? = nil,
        createdAt: Timestamp? = nil
    ) {
        self.accountId = accountId
        self.userId = userId
        self.isAnonymous = isAnonymous
        self.emailVerified = emailVerified
        self.verifiedEmail = verifiedEmail
        self.createdAt = createdAt
    }
}
