extension AccountKeySchema {
    /// Why a value does not fit its key's type, or `nil` when it fits or the key is unknown.
    public func typeError(identifier: String, value: AccountValue) -> AccountFieldError? {
        guard let descriptor = self[identifier], let mismatch = descriptor.valueType.mismatch(for: value) else {
            return nil
        }
        return AccountFieldError(key: identifier, code: .invalidType, message: "Invalid value: \(mismatch).")
    }

    /// Type errors and (when rejecting) unknown keys, one per key, sorted by key.
    public func fieldErrors(in values: [String: AccountValue], unknownKeys: UnknownKeyPolicy) -> [AccountFieldError] {
        values.keys.sorted().compactMap { identifier in
            guard contains(identifier) else {
                return unknownKeys == .reject ? Self.unknownKeyError(identifier) : nil
            }
            return typeError(identifier: identifier, value: values[identifier] ?? .null)
        }
    }

    static func unknownKeyError(_ identifier: String) -> AccountFieldError {
        AccountFieldError(key: identifier, code: .unknownKey, message: "Unknown account key.")
    }
}
