import KontoContracts
import KontoModel

/// OpenID Connect Core 5.1's standard claims of an account, by scope (5.4): `email` gives `email` and
/// `email_verified` (Identity's), `profile` the name, birthdate and gender the profile holds (Profile's); `sub` always.
struct OpenIDUserInfo: Encodable, Sendable, Equatable {
    var sub: String
    var email: String?
    var emailVerified: Bool?
    var name: String?
    var givenName: String?
    var familyName: String?
    var middleName: String?
    var nickname: String?
    var birthdate: String?
    var gender: String?

    init(grant: IdentityOpenIDAccessGrant, profile: AccountDetails?) {
        sub = grant.subject ?? ""
        let scopes = Set(grant.scopes ?? [])
        if scopes.contains("email") {
            email = grant.email
            emailVerified = grant.email == nil ? nil : grant.emailVerified
        }
        guard scopes.contains("profile"), let profile else { return }
        if let person = profile[NameKey.self] {
            givenName = person.givenName
            familyName = person.familyName
            middleName = person.middleName
            nickname = person.nickname
            let full = [person.namePrefix, person.givenName, person.middleName, person.familyName, person.nameSuffix].compactMap { $0 }.filter { !$0.isEmpty }
            name = full.isEmpty ? nil : full.joined(separator: " ")
        }
        birthdate = profile[DateOfBirthKey.self]?.description
        // OpenID Connect names `female` and `male` and lets other values be used; "prefer not to state" is no claim.
        switch profile[GenderIdentityKey.self] {
        case .preferNotToState?, nil: gender = nil
        case .nonBinary?: gender = "non-binary"
        case let other?: gender = other.rawValue
        }
    }

    enum CodingKeys: String, CodingKey {
        case sub, email, name, nickname, birthdate, gender
        case emailVerified = "email_verified"
        case givenName = "given_name"
        case familyName = "family_name"
        case middleName = "middle_name"
    }
}
