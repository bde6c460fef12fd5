import Foundation
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

/// The account as an operator's creation or change left it: Identity's record of it and the details Profile stores.
public struct IdentityManagedAccount: Codable, Sendable, Equatable {
    public var record: IdentityAccountRecord
    public var profile: ProfileRecord
    /// The change's events, for the caches (a userId change ends the account's sessions).
    public var eventIds: [UUID]?

    public init(record: IdentityAccountRecord, profile: ProfileRecord, eventIds: [UUID]? = nil) {
        self.record = record
        self.profile = profile
        self.eventIds = eventIds
    }
}

/// An operator's change to an account (docs/ADMIN.md, "Changing an account"): its details (server-owned keys too),
/// its userId, its address verified. Whatever is given changes, in that order.
public struct IdentityUpdateAccountRequest: Codable, Sendable {
    public var operatorCall: IdentityOperatorCall
    public var accountId: String
    public var userId: String?
    /// Only `true`: the address is recorded as verified (a new userId is unverified until then).
    public var verified: Bool?
    public var modifications: AccountModifications?
    /// The details' version the change expects (`account.versionConflict` otherwise).
    public var expectedVersion: Int64?

    public init(
        operatorCall: IdentityOperatorCall, accountId: String, userId: String? = nil, verified: Bool? = nil, modifications: AccountModifications? = nil,
        expectedVersion: Int64? = nil
    ) {
        self.operatorCall = operatorCall
        self.accountId = accountId
        self.userId = userId
        self.verified = verified
        self.modifications = modifications
        self.expectedVersion = expectedVersion
    }
}
