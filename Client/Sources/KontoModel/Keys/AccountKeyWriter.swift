/// Who may write a key's value: the account holder (through the API, the console, sign-up) or only the deployment's
/// own services over the wire (an operator's `plan`, `memberSince`). SpeziAccount's `manual` requirement only keeps
/// a key off the standard forms; this is the permission.
public enum AccountKeyWriter: String, Sendable, Hashable, Codable, CaseIterable {
    case user
    case server
}
