/// Whether the account's address (its userId, when userIds are email addresses) was confirmed by the link sent to it.
/// Identity's alone: the account assembler puts it into every answer from Identity's record, whatever any other
/// storage holds, so no one can set it by writing details. Absent for accounts without an address.
public enum EmailVerifiedKey: AccountKey {
    public typealias Value = Bool
    public static let identifier = "emailVerified"
    public static let name = "Email Address Verified"
    public static let category = AccountKeyCategory.credentials
    public static let options: AccountKeyOptions = [.display]
}
