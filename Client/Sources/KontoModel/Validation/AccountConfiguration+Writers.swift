extension AccountConfiguration {
    /// What the account holder may not write (sign-up details, a modification's set and remove): one field error per
    /// key the schema gives to the server (``AccountKeyWriter/server``), in identifier order. Services writing over
    /// the wire are not held by it.
    public func serverOwnedKeyErrors(_ identifiers: some Sequence<String>) -> [AccountFieldError] {
        Set(identifiers).sorted().compactMap { identifier in
            guard schema[identifier]?.writableBy == .server else { return nil }
            return AccountFieldError(key: identifier, code: .serverOwnedKey, message: "This value is set by the service, not by the account holder.")
        }
    }
}
