import KontoModel

/// The signed-in account as `GET /v1/account` gives it, with typed access to its details by key path:
/// `try await client.account()[\.dateOfBirth]`.
public struct KontoAccount: Sendable, Equatable {
    public var accountId: String
    /// The details' version; pass it to ``KontoClient/modify(set:remove:ifVersion:)`` to refuse a lost update.
    public var version: Int64
    public var isAnonymous: Bool
    public var details: AccountDetails

    public init(accountId: String, version: Int64, isAnonymous: Bool, details: AccountDetails) {
        self.accountId = accountId
        self.version = version
        self.isAnonymous = isAnonymous
        self.details = details
    }

    public subscript<Key: AccountKey>(_ keyPath: KeyPath<AccountKeys, Key.Type>) -> Key.Value? {
        details[keyPath]
    }
}

/// What signing up or logging in gives: the account's id, the new session and the details.
public struct KontoSignIn: Sendable, Equatable {
    public var session: KontoSession
    public var details: AccountDetails

    public subscript<Key: AccountKey>(_ keyPath: KeyPath<AccountKeys, Key.Type>) -> Key.Value? {
        details[keyPath]
    }
}
