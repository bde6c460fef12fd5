/// When the account was created, as an ISO 8601 date and time in UTC with milliseconds (an upgraded anonymous account
/// keeps its own). Identity's alone, like ``EmailVerifiedKey``: the account assembler puts it into every answer from
/// Identity's record, whatever any other storage holds under the name, so no one can set it by writing details.
public enum CreatedAtKey: AccountKey {
    public typealias Value = Timestamp
    public static let identifier = "createdAt"
    public static let name = "Created"
    public static let category = AccountKeyCategory.other
    public static let options: AccountKeyOptions = [.display]
    public static let valueType = AccountValueType.string
    public static let initialValue = InitialValue<Timestamp>.none
}
