import KontoModel

extension AccountFieldError.Code {
    /// A credential (a secret key such as the password) was sent to the Profile service, which never stores one.
    public static let credentialNotAccepted = Self(rawValue: "credentialNotAccepted")
    /// A string contains a character the storage cannot keep (NUL, which PostgreSQL's `jsonb` refuses).
    public static let unsupportedCharacter = Self(rawValue: "unsupportedCharacter")
    /// One value is over the size limit.
    public static let valueTooLarge = Self(rawValue: "valueTooLarge")
}
