/// The email address to contact the user.
public enum EmailKey: AccountKey {
    public typealias Value = String
    public static let identifier = "email"
    public static let name = "Email Address"
    public static let category = AccountKeyCategory.contactDetails
    public static let rules: [ValidationRule] = [.minimalEmail]

    /// When users log in with their email address, that address is their contact email.
    public static func fallback(in details: AccountDetails) -> String? {
        details.userIdType == .emailAddress ? details[UserIdKey.self] : nil
    }
}
