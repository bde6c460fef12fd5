/// The identifier the user logs in with: an email address or a username (see ``UserIdType``).
public enum UserIdKey: AccountKey {
    public typealias Value = String
    public static let identifier = "userId"
    public static let name = "User Identifier"
    public static let category = AccountKeyCategory.credentials

    /// Accounts without a userId (anonymous ones) are known by their accountId.
    public static func fallback(in details: AccountDetails) -> String? {
        details[AccountIdKey.self]
    }
}
