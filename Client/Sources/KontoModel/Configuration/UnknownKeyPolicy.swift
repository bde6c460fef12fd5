/// What happens to submitted keys the schema does not know.
public enum UnknownKeyPolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// Refuse them, one `unknownKey` field error each.
    case reject
    /// Store them as they are, unchecked.
    case keep
}
