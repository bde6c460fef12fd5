/// The namespace key paths start from: `details[\.dateOfBirth]`.
///
/// Add a key by extending it with a property returning the key's metatype.
public struct AccountKeys: Sendable {
    public init() {}
}

extension AccountKeys {
    public var accountId: AccountIdKey.Type { AccountIdKey.self }
    public var userId: UserIdKey.Type { UserIdKey.self }
    public var password: PasswordKey.Type { PasswordKey.self }
    public var name: NameKey.Type { NameKey.self }
    public var dateOfBirth: DateOfBirthKey.Type { DateOfBirthKey.self }
    public var genderIdentity: GenderIdentityKey.Type { GenderIdentityKey.self }
    public var email: EmailKey.Type { EmailKey.self }
    public var emailVerified: EmailVerifiedKey.Type { EmailVerifiedKey.self }
    public var createdAt: CreatedAtKey.Type { CreatedAtKey.self }
    public var phoneNumbers: PhoneNumbersKey.Type { PhoneNumbersKey.self }
}
