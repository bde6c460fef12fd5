extension AccountDetails {
    /// The typed value of a key, or its fallback when absent; `nil` when absent or not convertible.
    ///
    /// Setting `nil` removes the value. Setting a value that cannot be encoded as JSON (e.g. `Double.nan`)
    /// is a programming error; use ``set(_:_:)`` to handle it instead.
    public subscript<Key: AccountKey>(_ key: Key.Type) -> Key.Value? {
        get {
            if let stored = values(forIdentifier: Key.identifier) {
                return try? stored.decode(as: Key.Value.self)
            }
            return Key.fallback(in: self)
        }
        set {
            do {
                try set(key, newValue)
            } catch {
                preconditionFailure("Value for \(Key.identifier) cannot be encoded: \(error)")
            }
        }
    }

    /// Key-path access in the style of SwiftUI's environment: `details[\.dateOfBirth]`.
    public subscript<Key: AccountKey>(_ keyPath: KeyPath<AccountKeys, Key.Type>) -> Key.Value? {
        get { self[Key.self] }
        set { self[Key.self] = newValue }
    }

    /// Sets or (with `nil`) removes a typed value; throws when the value cannot be encoded.
    public mutating func set<Key: AccountKey>(_ key: Key.Type, _ value: Key.Value?) throws {
        guard let value else {
            self[identifier: Key.identifier] = nil
            return
        }
        self[identifier: Key.identifier] = try AccountValue(encoding: value)
        if Key.isSecret {
            markSecret(Key.identifier)
        }
    }

    /// The typed value as stored (no fallback); throws when the stored value does not convert.
    public func value<Key: AccountKey>(of key: Key.Type) throws -> Key.Value? {
        try values(forIdentifier: Key.identifier)?.decode(as: Key.Value.self)
    }

    /// Removes a typed value.
    public mutating func remove<Key: AccountKey>(_ key: Key.Type) {
        self[identifier: Key.identifier] = nil
    }

    /// Whether a typed key has a stored value (fallbacks do not count).
    public func contains<Key: AccountKey>(_ key: Key.Type) -> Bool {
        contains(Key.identifier)
    }

    /// Whether a key has a stored value, by key path: `details.contains(\.email)`.
    public func contains<Key: AccountKey>(_ keyPath: KeyPath<AccountKeys, Key.Type>) -> Bool {
        contains(Key.identifier)
    }

    /// The account identifier.
    public var accountId: String? {
        self[AccountIdKey.self]
    }

    /// The user identifier, or the account identifier when there is none.
    public var userId: String? {
        self[UserIdKey.self]
    }

    /// The contact email, or the userId when users log in with their email address.
    public var email: String? {
        self[EmailKey.self]
    }

    private func values(forIdentifier identifier: String) -> AccountValue? {
        self[identifier: identifier]
    }
}
