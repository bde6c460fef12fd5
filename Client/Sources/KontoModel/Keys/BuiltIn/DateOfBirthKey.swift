/// The date of birth, as a calendar date `"yyyy-MM-dd"`.
public enum DateOfBirthKey: AccountKey {
    public typealias Value = CalendarDate
    public static let identifier = "dateOfBirth"
    public static let name = "Date of Birth"
    public static let category = AccountKeyCategory.personalDetails
}
