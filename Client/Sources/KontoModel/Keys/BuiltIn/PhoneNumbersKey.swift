/// Phone numbers, as entered.
public enum PhoneNumbersKey: AccountKey {
    public typealias Value = [String]
    public static let identifier = "phoneNumbers"
    public static let name = "Phone Numbers"
    public static let category = AccountKeyCategory.contactDetails
}
