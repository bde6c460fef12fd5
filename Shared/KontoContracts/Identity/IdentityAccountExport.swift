import KontoModel

/// Everything Identity holds about the caller's account, for its owner's copy of their data
/// (``IdentityContract/exportAccount``): metadata, never a secret or a digest (no password hash, factor secret,
/// token or recovery code, nor their hashes).
public struct IdentityAccountExport: Codable, Sendable, Equatable {
    /// The most audit entries one export carries: the newest; ``auditComplete`` says whether older ones were left out.
    public static let maximumAuditEntries = 500

    /// A link mailed to confirm an address, not used yet.
    public struct PendingVerification: Codable, Sendable, Equatable {
        /// Where the link went: the userId, or (where userIds are usernames) the contact address.
        public var address: String
        public var expiresAt: Timestamp

        public init(address: String, expiresAt: Timestamp) {
            self.address = address
            self.expiresAt = expiresAt
        }
    }

    /// A linked provider identity, as its owner sees it, with the provider's own identifier of the user.
    public struct LinkedIdentity: Codable, Sendable, Equatable {
        public var id: String
        public var provider: String
        /// The provider's stable identifier of the user (`sub`).
        public var subject: String
        public var email: String?
        public var emailVerified: Bool
        public var createdAt: Timestamp
        public var lastUsedAt: Timestamp?

        public init(id: String, provider: String, subject: String, email: String?, emailVerified: Bool, createdAt: Timestamp, lastUsedAt: Timestamp?) {
            self.id = id
            self.provider = provider
            self.subject = subject
            self.email = email
            self.emailVerified = emailVerified
            self.createdAt = createdAt
            self.lastUsedAt = lastUsedAt
        }
    }

    /// accountId, userId, anonymity, verification, the verified contact address, creation.
    public var facts: IdentityAccountFacts
    public var createdAt: Timestamp
    public var hasPassword: Bool
    /// When an operator disabled the account; nil while it is enabled.
    public var disabledAt: Timestamp?
    /// When the account last signed in from a client (its latest remembered client's), if ever.
    public var lastSignInAt: Timestamp?
    /// When the address was confirmed.
    public var verifiedAt: Timestamp?
    public var pendingVerifications: [PendingVerification]
    public var mailPreferences: IdentityMailPreferences
    /// The live sessions, oldest first, the caller's marked `current`.
    public var sessions: [IdentityAccountSessionSummary]
    /// Second factors (kind, name, dates; pending enrolments too), never their secrets.
    public var factors: [IdentityFactor]
    public var identities: [LinkedIdentity]
    /// The account's audit entries still kept, newest first (at most ``maximumAuditEntries``).
    public var auditEntries: [IdentityAuditEntry]
    /// False when older entries exist beyond those carried.
    public var auditComplete: Bool
    /// The applications with access through Konto as an OpenID Provider: consents and the sign-ins holding tokens (never
    /// a token). Absent from an Identity older than them.
    public var applications: [IdentityOpenIDApplication]?

    public init(
        facts: IdentityAccountFacts, createdAt: Timestamp, hasPassword: Bool, disabledAt: Timestamp?, lastSignInAt: Timestamp?, verifiedAt: Timestamp?,
        pendingVerifications: [PendingVerification], mailPreferences: IdentityMailPreferences, sessions: [IdentityAccountSessionSummary],
        factors: [IdentityFactor], identities: [LinkedIdentity], auditEntries: [IdentityAuditEntry], auditComplete: Bool,
        applications: [IdentityOpenIDApplication]? = nil
    ) {
        self.facts = facts
        self.createdAt = createdAt
        self.hasPassword = hasPassword
        self.disabledAt = disabledAt
        self.lastSignInAt = lastSignInAt
        self.verifiedAt = verifiedAt
        self.pendingVerifications = pendingVerifications
        self.mailPreferences = mailPreferences
        self.sessions = sessions
        self.factors = factors
        self.identities = identities
        self.auditEntries = auditEntries
        self.auditComplete = auditComplete
        self.applications = applications
    }
}
