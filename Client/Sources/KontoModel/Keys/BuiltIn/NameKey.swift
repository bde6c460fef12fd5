/// The person's name.
public enum NameKey: AccountKey {
    public typealias Value = PersonName
    public static let identifier = "name"
    public static let name = "Name"
    public static let category = AccountKeyCategory.name
}
