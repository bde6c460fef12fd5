import KontoModel

/// The signed-in account as `GET /v1/account` gives it (the model's ``AssembledAccount``: the gateway encodes that
/// very type), with typed access to its details by key path: `try await client.account()[\.dateOfBirth]`.
/// Its `version` is what ``KontoClient/modify(set:remove:ifVersion:)`` takes to refuse a lost update.
public typealias KontoAccount = AssembledAccount

extension AssembledAccount {
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
