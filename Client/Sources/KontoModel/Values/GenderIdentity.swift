/// The gender identity a person states, as in SpeziAccount.
public enum GenderIdentity: String, Sendable, Hashable, Codable, CaseIterable {
    case female
    case male
    case transgender
    case nonBinary
    case preferNotToState
}
