import KontoModel

/// An account an operator makes (docs/ADMIN.md, "Creating and importing accounts"): its userId and details, verified
/// or not, with a password to hash, a password hash brought from another system, or neither (its owner then sets one
/// through a reset, an emailed code or a provider). No session is made: the owner signs in themselves.
public struct IdentityCreateAccountRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    public var userId: String
    /// A password to hash, checked against the password rules as a sign-up's is.
    public var password: SecretString?
    /// A PHC string from another system (argon2id, bcrypt `$2b$`/`$2a$`/`$2y$`, PBKDF2-SHA256), stored as given and
    /// replaced by Konto's argon2id at the first successful sign-in. Never together with `password`.
    public var passwordHash: SecretString?
    /// Profile's part; the operator may set server-owned keys too.
    public var details: AccountDetails
    /// The userId's address counts as verified from the start (the other system had verified it).
    public var verified: Bool

    /// The longest imported hash read (every scheme's strings are far shorter).
    public static let maximumHashLength = 512

    public init(
        operatorCall: IdentityOperatorCall, userId: String, password: SecretString? = nil, passwordHash: SecretString? = nil,
        details: AccountDetails = AccountDetails(), verified: Bool = false
    ) {
        self.operatorCall = operatorCall
        self.userId = userId
        self.password = password
        self.passwordHash = passwordHash
        self.details = details
        self.verified = verified
    }

    private enum CodingKeys: String, CodingKey {
        case operatorCall, userId, password, passwordHash, details, verified
    }

    /// Details and `verified` may be left out (none; not verified).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        operatorCall = try container.decode(IdentityOperatorCall.self, forKey: .operatorCall)
        userId = try container.decode(String.self, forKey: .userId)
        password = try container.decodeIfPresent(SecretString.self, forKey: .password)
        passwordHash = try container.decodeIfPresent(SecretString.self, forKey: .passwordHash)
        details = try container.decodeIfPresent(AccountDetails.self, forKey: .details) ?? AccountDetails()
        verified = try container.decodeIfPresent(Bool.self, forKey: .verified) ?? false
    }
}

/// The account an operator made: Identity's record of it and the details Profile stored.
public struct IdentityCreatedAccount: Codable, Sendable, Equatable {
    public var record: IdentityAccountRecord
    public var profile: ProfileRecord

    public init(record: IdentityAccountRecord, profile: ProfileRecord) {
        self.record = record
        self.profile = profile
    }
}
