import KontoContracts
import KontoModel
import Testing

@Suite("The account assembler")
struct AccountAssemblerTests {
    let assembler = AccountAssembler(userIdType: .emailAddress)

    @Test("Profile's details, the accountId and Identity's userId as given, at Profile's version; never a password")
    func signedUp() {
        let profile = ProfileRecord(
            accountId: "a1",
            details: AccountDetails(values: ["name": .string("Ada"), PasswordKey.identifier: .string("secret"), AccountIdKey.identifier: .string("stale")]),
            version: 7
        )
        let account = assembler.account(IdentityAccountFacts(accountId: "a1", userId: "Ada@Example.org", isAnonymous: false), profile: profile)
        #expect(account.accountId == "a1")
        #expect(account.version == 7)
        #expect(!account.isAnonymous)
        #expect(account.details.storedValues == [
            "name": .string("Ada"),
            AccountIdKey.identifier: .string("a1"),
            UserIdKey.identifier: .string("Ada@Example.org"),
        ])
    }

    @Test("an anonymous account before its sign-up: version 0, its accountId alone")
    func anonymous() {
        let account = assembler.account(IdentityAccountFacts(accountId: "a2", userId: nil, isAnonymous: true), profile: nil)
        #expect(account == AssembledAccount(accountId: "a2", version: 0, isAnonymous: true, details: AccountDetails(values: [AccountIdKey.identifier: .string("a2")])))
    }

    @Test("a userId Profile holds (it never should) gives way to Identity's, and none for an account without one")
    func identityOwnsTheUserId() {
        let profile = ProfileRecord(accountId: "a3", details: AccountDetails(values: [UserIdKey.identifier: .string("old@example.org")]), version: 1)
        #expect(assembler.account(IdentityAccountFacts(accountId: "a3", userId: "new@example.org", isAnonymous: false), profile: profile).details.userId == "new@example.org")
        #expect(assembler.account(IdentityAccountFacts(accountId: "a3", userId: nil, isAnonymous: true), profile: profile).details.storedValues[UserIdKey.identifier] == nil)
    }

    @Test("createdAt is Identity's, an ISO 8601 time in UTC written over anything Profile holds under the name; none when Identity's answer has none")
    func createdAt() {
        let profile = ProfileRecord(accountId: "a5", details: AccountDetails(values: [CreatedAtKey.identifier: .string("1970-01-01T00:00:00.000Z")]), version: 1)
        let created = Timestamp(milliseconds: 1_800_000_000_123)
        let account = assembler.account(IdentityAccountFacts(accountId: "a5", userId: "ada@example.org", isAnonymous: false, createdAt: created), profile: profile)
        #expect(account.details.storedValues[CreatedAtKey.identifier] == .string("2027-01-15T08:00:00.123Z"))
        #expect(account.details[\.createdAt] == created)
        // An older Identity's facts without it: nothing, not Profile's.
        #expect(assembler.account(IdentityAccountFacts(accountId: "a5", userId: "ada@example.org", isAnonymous: false), profile: profile).details.storedValues[CreatedAtKey.identifier] == nil)
    }

    @Test("where userIds are usernames, emailVerified says whether the email detail is the address Identity confirmed (without case); none without an email or for an anonymous account")
    func contactAddress() {
        let usernames = AccountAssembler(userIdType: .username)
        let profile = ProfileRecord(accountId: "a4", details: AccountDetails(values: [EmailKey.identifier: .string("Ada@Example.org"), EmailVerifiedKey.identifier: .bool(true)]), version: 2)
        func verified(_ verifiedEmail: String?, profile: ProfileRecord? = profile, isAnonymous: Bool = false) -> AccountValue? {
            usernames.account(IdentityAccountFacts(accountId: "a4", userId: isAnonymous ? nil : "ada", isAnonymous: isAnonymous, verifiedEmail: verifiedEmail), profile: profile).details.storedValues[EmailVerifiedKey.identifier]
        }
        #expect(verified("ada@example.org") == .bool(true))
        #expect(verified("ada@elsewhere.org") == .bool(false), "a changed address is unverified")
        #expect(verified(nil) == .bool(false), "what Profile holds under the name counts for nothing")
        #expect(verified("ada@example.org", profile: ProfileRecord(accountId: "a4", details: AccountDetails(values: [:]), version: 1)) == nil)
        #expect(verified("ada@example.org", isAnonymous: true) == nil)
        // Where userIds are addresses, the userId's state is what counts, whatever the email detail.
        #expect(assembler.account(IdentityAccountFacts(accountId: "a4", userId: "ada@example.org", isAnonymous: false, emailVerified: false, verifiedEmail: "ada@example.org"), profile: profile)
            .details.storedValues[EmailVerifiedKey.identifier] == .bool(false))
    }
}
