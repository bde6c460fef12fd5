/// The account's stable, server-assigned identifier.
public enum AccountIdKey: AccountKey {
    public typealias Value = String
    public static let identifier = "accountId"
    public static let name = "Account Identifier"
    public static let category = AccountKeyCategory.credentials
    // Never mutable: changing it is refused as `accountIdChanged`.
    public static let options: AccountKeyOptions = [.display]
}
