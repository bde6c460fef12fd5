/// What users log in with.
public enum UserIdType: String, Sendable, Hashable, Codable, CaseIterable {
    /// An email address; it doubles as the contact email when no `email` is stored.
    case emailAddress
    case username
}
