/// How strongly a configured key is asked for, as in SpeziAccount.
public enum AccountKeyRequirement: String, Sendable, Hashable, Codable, CaseIterable {
    /// Must be present at signup; strings must not be blank (``ValidationRule/nonEmpty`` unless rules are given).
    case requires
    /// Asked for at signup but optional.
    case collects
    /// Not asked for at signup, but may be added later.
    case supports
    /// Stored, but never asked for through the standard forms.
    case manual
}
