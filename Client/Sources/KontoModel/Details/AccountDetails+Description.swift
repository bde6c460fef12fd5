extension AccountDetails: CustomStringConvertible, CustomDebugStringConvertible {
    /// Values by identifier, secrets replaced by `<redacted>`, so details can be logged safely.
    public var description: String {
        let entries = identifiers.map { identifier in
            let shown = isSecret(identifier) ? "<redacted>" : self[identifier: identifier].map(String.init(describing:)) ?? "nil"
            return "\(identifier): \(shown)"
        }
        return "AccountDetails(" + entries.joined(separator: ", ") + ")"
    }

    public var debugDescription: String {
        description
    }
}

/// `dump` and debuggers read the mirror, so it shows only the values a client may see.
extension AccountDetails: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: publicValues.sorted { $0.key < $1.key }.map { (label: $0.key, value: $0.value) }, displayStyle: .dictionary)
    }
}
