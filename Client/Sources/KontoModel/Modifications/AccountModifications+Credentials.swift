extension AccountModifications {
    /// The keys that are credentials, never details: each changes through a route of its own (the userId and the
    /// password ask for the password; the account identifier never changes).
    public static let credentialKeys: Set<String> = [AccountIdKey.identifier, UserIdKey.identifier, PasswordKey.identifier]

    /// One `credentialNotAccepted` error per credential key it sets or removes, by key; `message` says, for a key,
    /// where it changes instead. Empty when it names none.
    public func credentialKeyErrors(_ message: (String) -> String) -> [AccountFieldError] {
        Set(self.set.storedValues.keys).union(remove).intersection(Self.credentialKeys).sorted().map { key in
            AccountFieldError(key: key, code: .credentialNotAccepted, message: message(key))
        }
    }
}
