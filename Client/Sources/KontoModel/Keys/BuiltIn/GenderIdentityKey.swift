/// The stated gender identity.
public enum GenderIdentityKey: AccountKey {
    public typealias Value = GenderIdentity
    public static let identifier = "genderIdentity"
    public static let name = "Gender Identity"
    public static let category = AccountKeyCategory.personalDetails
    public static let initialValue = InitialValue<GenderIdentity>.default(.preferNotToState)
}
