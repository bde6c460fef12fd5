/// The group a key is shown in, as in SpeziAccount.
public enum AccountKeyCategory: String, Sendable, Hashable, Codable, CaseIterable {
    case credentials
    case name
    case contactDetails
    case personalDetails
    case other
}
