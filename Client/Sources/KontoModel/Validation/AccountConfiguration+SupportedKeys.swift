extension AccountConfiguration {
    /// `unsupportedKey` errors for the identifiers a storage with ``supportedKeys`` cannot hold, sorted.
    ///
    /// `accountId` is always supported: it is the record's key. Keys the schema does not know are left to
    /// ``valueErrors(in:)`` when unknown keys are rejected, so a key is never reported twice; when they are kept,
    /// an `exactly` storage still refuses them.
    public func unsupportedKeyErrors(in identifiers: some Sequence<String>) -> [AccountFieldError] {
        guard case .exactly = supportedKeys else {
            return []
        }
        return Set(identifiers).sorted().compactMap { identifier in
            guard identifier != AccountIdKey.identifier, !supportedKeys.contains(identifier) else { return nil }
            if !schema.contains(identifier), unknownKeys == .reject {
                return nil
            }
            return AccountFieldError(key: identifier, code: .unsupportedKey, message: "This account key is not supported here.")
        }
    }
}
