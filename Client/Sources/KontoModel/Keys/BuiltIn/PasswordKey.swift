/// The password; secret, so default encodings and descriptions leave it out.
public enum PasswordKey: AccountKey {
    public typealias Value = String
    public static let identifier = "password"
    public static let name = "Password"
    public static let category = AccountKeyCategory.credentials
    public static let options: AccountKeyOptions = [.mutable]
    public static let isSecret = true
    public static let rules: [ValidationRule] = [.minimalPassword]
}
