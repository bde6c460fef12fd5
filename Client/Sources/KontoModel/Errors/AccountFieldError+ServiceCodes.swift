// Field codes the services add to the account model's own: Profile's storage limits, and credentials sent where
// they do not belong (to Profile, or inside Identity's details).
extension AccountFieldError.Code {
    /// A credential was sent where it is not accepted: a secret key to the Profile service, which never stores one,
    /// or `userId`/`password` inside sign-up details instead of their own fields.
    public static let credentialNotAccepted = Self(rawValue: "credentialNotAccepted")
    /// A string contains a character the storage cannot keep (NUL, which PostgreSQL's `jsonb` refuses).
    public static let unsupportedCharacter = Self(rawValue: "unsupportedCharacter")
    /// One value is over the size limit (a profile value, a password over 1,024 bytes).
    public static let valueTooLarge = Self(rawValue: "valueTooLarge")
}
