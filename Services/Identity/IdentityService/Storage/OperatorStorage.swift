import KontoContracts
import KontoModel

/// An operator key as Identity keeps it: the SHA-256 of its secret, never the secret.
public struct StoredOperatorKey: Sendable, Equatable {
    /// 32 lowercase hex digits (``OperatorKeyText/keyId``).
    public var id: String
    public var name: String
    public var scopes: [OperatorScope]
    /// SHA-256 of the secret's 32 bytes.
    public var secretHash: [UInt8]
    public var createdAt: Timestamp
    public var createdBy: String?
    public var expiresAt: Timestamp?
    public var lastUsedAt: Timestamp?
    public var revokedAt: Timestamp?

    public init(
        id: String, name: String, scopes: [OperatorScope], secretHash: [UInt8], createdAt: Timestamp, createdBy: String? = nil,
        expiresAt: Timestamp? = nil, lastUsedAt: Timestamp? = nil, revokedAt: Timestamp? = nil
    ) {
        self.id = id
        self.name = name
        self.scopes = scopes
        self.secretHash = secretHash
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.expiresAt = expiresAt
        self.lastUsedAt = lastUsedAt
        self.revokedAt = revokedAt
    }

    /// As an operator sees it: no hash.
    public var listed: IdentityOperatorKey {
        IdentityOperatorKey(
            id: id, name: name, scopes: scopes, createdAt: createdAt, createdBy: createdBy, expiresAt: expiresAt, lastUsedAt: lastUsedAt,
            revokedAt: revokedAt
        )
    }
}

/// What a revocation did (``OperatorStorage/revokeOperatorKey(id:at:)``).
public enum OperatorKeyRevocation: Sendable, Equatable {
    case revoked
    case notFound
    /// Refused: no other live key holds keys:write.
    case lastKeyManager
}

/// An account search as the storage runs it: every filter given must hold; newest first by (createdAt, accountId).
public struct AccountSearch: Sendable, Equatable {
    /// Lowercased; the userId (lowercased) begins with it.
    public var userIdPrefix: String?
    /// Lowercased; the userId (lowercased) contains it.
    public var userIdContains: String?
    /// The account's address (or, where userIds are usernames, its contact address) was confirmed.
    public var verified: Bool?
    public var disabled: Bool?
    public var anonymous: Bool?
    /// Created at or after.
    public var createdAfter: Timestamp?
    /// Created before.
    public var createdBefore: Timestamp?
    /// Has a confirmed factor asked for at sign-in (an authenticator app or a passkey).
    public var hasSecondFactor: Bool?
    public var provider: String?
    /// The previous page's last account: this page starts after it.
    public var after: AccountSearchPosition?
    public var limit: Int

    public init(
        userIdPrefix: String? = nil, userIdContains: String? = nil, verified: Bool? = nil, disabled: Bool? = nil, anonymous: Bool? = nil, createdAfter: Timestamp? = nil,
        createdBefore: Timestamp? = nil, hasSecondFactor: Bool? = nil, provider: String? = nil, after: AccountSearchPosition? = nil, limit: Int
    ) {
        self.userIdPrefix = userIdPrefix
        self.userIdContains = userIdContains
        self.verified = verified
        self.disabled = disabled
        self.anonymous = anonymous
        self.createdAfter = createdAfter
        self.createdBefore = createdBefore
        self.hasSecondFactor = hasSecondFactor
        self.provider = provider
        self.after = after
        self.limit = limit
    }

    /// Whether an account matches (the memory storage's test; PostgreSQL's query says the same in SQL).
    func matches(_ credential: StoredCredential, hasSecondFactor: Bool, providers: Set<String>) -> Bool {
        let userId = credential.userId?.lowercased()
        if let userIdPrefix, userId?.hasPrefix(userIdPrefix) != true { return false }
        if let userIdContains, userId?.contains(userIdContains) != true { return false }
        if let verified, (credential.emailVerifiedAt != nil || credential.verifiedEmail != nil) != verified { return false }
        if let disabled, (credential.disabledAt != nil) != disabled { return false }
        if let anonymous, credential.isAnonymous != anonymous { return false }
        if let createdAfter, credential.createdAt < createdAfter { return false }
        if let createdBefore, !(credential.createdAt < createdBefore) { return false }
        if let wanted = self.hasSecondFactor, wanted != hasSecondFactor { return false }
        if let provider, !providers.contains(provider) { return false }
        if let after, !(AccountSearchPosition(createdAt: credential.createdAt, accountId: credential.accountId) < after) { return false }
        return true
    }
}

/// A place in the search's order (newest first): a page's last account.
public struct AccountSearchPosition: Sendable, Equatable, Comparable {
    public var createdAt: Timestamp
    public var accountId: String

    public init(createdAt: Timestamp, accountId: String) {
        self.createdAt = createdAt
        self.accountId = accountId
    }

    /// "Comes after in the listing": older, or as old with a smaller id.
    public static func < (lhs: AccountSearchPosition, rhs: AccountSearchPosition) -> Bool {
        (lhs.createdAt, lhs.accountId) < (rhs.createdAt, rhs.accountId)
    }
}

public struct AccountSearchResult: Sendable, Equatable {
    public var accounts: [IdentityAccountSummary]
    public var total: Int
    public var totalIsExact: Bool

    public init(accounts: [IdentityAccountSummary], total: Int, totalIsExact: Bool) {
        self.accounts = accounts
        self.total = total
        self.totalIsExact = totalIsExact
    }
}

/// What disabling or enabling an account came to.
public enum AccountDisabling: Sendable, Equatable {
    /// No such account (or a pending sign-up).
    case notFound
    /// It was disabled (enabled) already: nothing changed, no event.
    case unchanged
    /// Changed, with its events; `sessionsEnded` by a disabling.
    case changed(sessionsEnded: Int)
}

/// Operator keys and what operators read about accounts (docs/ADMIN.md).
public protocol OperatorStorage: Sendable {
    /// Stores a new key; with `onlyIfNone`, only while no key exists at all (the bootstrap key, used once). Returns
    /// whether it was stored.
    func createOperatorKey(_ key: StoredOperatorKey, onlyIfNone: Bool) async throws(IdentityStorageError) -> Bool

    func operatorKey(id: String) async throws(IdentityStorageError) -> StoredOperatorKey?

    /// Every key, revoked ones too, oldest first.
    func operatorKeys() async throws(IdentityStorageError) -> [StoredOperatorKey]

    /// Revokes a key (its first revocation's time stays), unless it is the last live key holding keys:write: decided
    /// under a lock, so two revocations at once cannot both pass the check.
    func revokeOperatorKey(id: String, at now: Timestamp) async throws(IdentityStorageError) -> OperatorKeyRevocation

    /// Records a key's use.
    func touchOperatorKey(id: String, at now: Timestamp) async throws(IdentityStorageError)

    /// Accounts (never a pending sign-up) matching the search, newest first, at most `search.limit`; and how many match
    /// in all (exact up to `countLimit`, an estimate above).
    func searchAccounts(_ search: AccountSearch, countLimit: Int) async throws(IdentityStorageError) -> AccountSearchResult

    /// Disables an account (`disabled`: its credential version raised, so every session ends and a sign-in under way
    /// cannot leave one; its reset tokens and sign-in codes go) or enables it, with `events` in the same transaction.
    func setAccountDisabled(accountId: String, disabled: Bool, at now: Timestamp, events: [AccountEvent]) async throws(IdentityStorageError) -> AccountDisabling

    /// What an operator may see of an account; nil for none (or a pending sign-up).
    func accountRecord(accountId: String, userIdType: UserIdType) async throws(IdentityStorageError) -> IdentityAccountRecord?
}
