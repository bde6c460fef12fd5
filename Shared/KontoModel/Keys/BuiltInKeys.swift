/// The account's stable, server-assigned identifier.
public enum AccountIdKey: AccountKey {
    public typealias Value = String
    public static let identifier = "accountId"
    public static let name = "Account Identifier"
    public static let category = AccountKeyCategory.credentials
    // Never mutable: changing it is refused as `accountIdChanged`.
    public static let options: AccountKeyOptions = [.display]
}

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

/// The person's name.
public enum NameKey: AccountKey {
    public typealias Value = PersonName
    public static let identifier = "name"
    public static let name = "Name"
    public static let category = AccountKeyCategory.name
}

/// The date of birth, as a calendar date `"yyyy-MM-dd"`.
public enum DateOfBirthKey: AccountKey {
    public typealias Value = CalendarDate
    public static let identifier = "dateOfBirth"
    public static let name = "Date of Birth"
    public static let category = AccountKeyCategory.personalDetails
}

/// The stated gender identity.
public enum GenderIdentityKey: AccountKey {
    public typealias Value = GenderIdentity
    public static let identifier = "genderIdentity"
    public static let name = "Gender Identity"
    public static let category = AccountKeyCategory.personalDetails
    public static let initialValue = InitialValue<GenderIdentity>.default(.preferNotToState)
}

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

/// Phone numbers, as entered.
public enum PhoneNumbersKey: AccountKey {
    public typealias Value = [String]
    public static let identifier = "phoneNumbers"
    public static let name = "Phone Numbers"
    public static let category = AccountKeyCategory.contactDetails
}
