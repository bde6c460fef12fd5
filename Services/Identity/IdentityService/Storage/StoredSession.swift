import KontoModel

/// A session as Identity keeps it: never the token, only its SHA-256.
public struct StoredSession: Sendable, Equatable {
    public var id: String
    public var accountId: String
    /// SHA-256 of the token (32 bytes).
    public var tokenHash: [UInt8]
    public var createdAt: Timestamp
    /// The idle expiry: pushed forward as the session is used, never past ``absoluteExpiresAt``.
    public var idleExpiresAt: Timestamp
    public var absoluteExpiresAt: Timestamp
    /// Until when security-related operations need no password; nil when not privileged.
    public var privilegedUntil: Timestamp?
    /// The account's ``StoredCredential/credentialVersion`` the session was created under; the session is valid only
    /// while the account's is the same.
    public var credentialVersion: Int64
    /// The account's credential as ``IdentityStorage/session(tokenHash:)`` found it with the session (without its
    /// password hash): what the session check answers with. Ignored when stored.
    public var account: StoredCredential?
    /// How it was authenticated: 1 (password, or an anonymous account), 2 (with a second factor). A privileged window
    /// of an `aal2` session is what security-related operations of an account with second factors need.
    public var assuranceLevel: Int
    /// When it was last used (moved with the idle expiry, so to within the touch interval); nil for one made before
    /// Konto kept it.
    public var lastUsedAt: Timestamp?
    /// How it was signed in (``IdentityAccountSessionSummary/signInMethod``).
    public var signInMethod: String?
    /// The client's network when it signed in (``SessionClient/coarse(address:)``), never the host's address.
    public var clientAddress: String?
    /// What the client called itself (``SessionClient/name(_:)``).
    public var clientName: String?

    public init(
        id: String,
        accountId: String,
        tokenHash: [UInt8],
        createdAt: Timestamp,
        idleExpiresAt: Timestamp,
        absoluteExpiresAt: Timestamp,
        privilegedUntil: Timestamp?,
        credentialVersion: Int64 = 1,
        account: StoredCredential? = nil,
        assuranceLevel: Int = 1,
        lastUsedAt: Timestamp? = nil,
        signInMethod: String? = nil,
        clientAddress: String? = nil,
        clientName: String? = nil
    ) {
        self.id = id
        self.accountId = accountId
        self.tokenHash = tokenHash
        self.createdAt = createdAt
        self.idleExpiresAt = idleExpiresAt
        self.absoluteExpiresAt = absoluteExpiresAt
        self.privilegedUntil = privilegedUntil
        self.credentialVersion = credentialVersion
        self.account = account
        self.assuranceLevel = assuranceLevel
        self.lastUsedAt = lastUsedAt
        self.signInMethod = signInMethod
        self.clientAddress = clientAddress
        self.clientName = clientName
    }

    /// Whether the account is anonymous: it has no userId (as looked up).
    public var accountIsAnonymous: Bool { account?.userId == nil }

    /// Whether the session may be used at `now`.
    public func isValid(at now: Timestamp) -> Bool {
        now < idleExpiresAt && now < absoluteExpiresAt
    }

    /// Whether security-related operations need no password at `now`.
    public func isPrivileged(at now: Timestamp) -> Bool {
        privilegedUntil.map { now < $0 } ?? false
    }
}
