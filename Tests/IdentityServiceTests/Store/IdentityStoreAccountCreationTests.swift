import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import Testing

/// Accounts an operator makes (docs/ADMIN.md, "Creating and importing accounts"), through Identity's operations.
@Suite("Identity store: accounts an operator makes")
struct IdentityStoreAccountCreationTests {
    typealias Operators = IdentityStoreOperatorTests

    /// The fixture's keys and a server-owned `plan`.
    static let configuration: AccountConfiguration = {
        // swiftlint:disable:next force_try
        try! AccountConfiguration(json: Data("""
            {"userIdType": "emailAddress", "keys": [
              {"identifier": "userId", "requirement": "requires"},
              {"identifier": "password", "requirement": "requires"},
              {"identifier": "name", "requirement": "requires"},
              {"identifier": "plan", "type": "enum", "cases": ["free", "pro"], "requirement": "manual", "writableBy": "server"}
            ]}
            """.utf8), source: "accounts.json")
    }()

    static func fixture(storage: any IdentityStorage = InMemoryIdentityStorage()) async throws -> IdentityFixture {
        var options = IdentityOptions()
        options.bootstrapOperatorKey = Operators.bootstrap
        options.throttle = ThrottlePolicy(threshold: 3, baseDelay: .seconds(60))
        let fixture = try IdentityFixture(storage: storage, configuration: configuration, options: options)
        try await fixture.store.installBootstrapOperatorKey()
        return fixture
    }

    static func request(
        _ userId: String, password: String? = nil, hash: String? = nil, details: [String: AccountValue] = ["name": IdentityFixture.name], verified: Bool = false,
        key: String = Operators.bootstrap.text
    ) -> IdentityCreateAccountRequest {
        IdentityCreateAccountRequest(
            operatorCall: Operators.call(key), userId: userId, password: password.map(SecretString.init), passwordHash: hash.map(SecretString.init),
            details: AccountDetails(values: details), verified: verified
        )
    }

    @Test("an account with a password: no session, no mail, audited as the operator's; it signs in with that password", arguments: IdentityStorageKind.allCases)
    func withPassword(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage: storage)
            let before = try await fixture.events().count
            let made = try await fixture.store.createAccount(Self.request(
                "  Curie@Example.org ", password: "radioactive decay", details: ["name": IdentityFixture.name, "plan": .string("pro")]
            ))
            let accountId = made.record.facts.accountId
            #expect(made.record.facts.userId == "Curie@Example.org")
            #expect(made.record.hasPassword && made.record.sessionCount == 0 && made.record.verifiedAt == nil && made.record.facts.emailVerified == false)
            // Server-owned keys are the operator's to set.
            #expect(made.profile.details.storedValues["plan"] == .string("pro"))
            // One event (the account is there), no mail asked for, no session.
            let events = try await fixture.events().dropFirst(before)
            #expect(events.map(\.kind) == [.associatedAccount])
            #expect(try await storage.accountSessions(accountId: accountId)?.isEmpty == true)
            let entries = try await IdentityStoreAuditTests.entries(fixture, accountId: accountId)
            #expect(entries.contains { $0.type == "account.created" && $0.actorType == .operator && $0.actorId == Operators.bootstrap.keyId })
            #expect(entries.contains { $0.type == "admin.createAccount" && $0.facts["outcome"] == "ok" })
            let session = try await fixture.login("curie@example.org", password: "radioactive decay")
            #expect(session.accountId == accountId)
            // Taken now, in any case.
            let again = await identityError { try await fixture.store.createAccount(Self.request("CURIE@example.org", password: "radioactive decay")) }
            #expect(again?.code == .credentialsTaken)
        }
    }

    @Test("verified and without a password: the address is verified, no password signs in, the owner's reset sets one")
    func verifiedWithoutPassword() async throws {
        let fixture = try await Self.fixture()
        let made = try await fixture.store.createAccount(Self.request("meitner@example.org", verified: true))
        #expect(!made.record.hasPassword && made.record.verifiedAt != nil && made.record.facts.emailVerified == true)
        let refused = await identityError { try await fixture.login("meitner@example.org", password: "") }
        #expect(refused?.code == .validationFailed || refused?.code == .wrongCredentials)
        let wrong = await identityError { try await fixture.login("meitner@example.org", password: "anything at all") }
        #expect(wrong?.code == .wrongCredentials)
        // The operator's reset mail is how the owner sets one.
        _ = try await fixture.store.sendPasswordReset(.init(operatorCall: Operators.call(Operators.bootstrap.text), accountId: made.record.facts.accountId))
        #expect(try await fixture.events().contains { if case let .mailRequested(request) = $0.kind { request.message == .passwordReset } else { false } })
    }

    @Test("refusals change nothing: both secrets, unreadable or too costly hashes, bad details, a missing scope, a wrong key")
    func refusals() async throws {
        let fixture = try await Self.fixture()
        let bcrypt = "$2b$10$LJwEItx6gQTMYxSM2i.PIuzy3CLoj3A3sKVfJfppgoauDP69J0glC"
        let cases: [(IdentityCreateAccountRequest, KontoErrorCode)] = [
            (Self.request("a@example.org", password: "radioactive decay", hash: bcrypt), .adminInvalidRequest),
            (Self.request("a@example.org", hash: "$1$saltsalt$qjXMvbEw8oaL.CzflDugX/"), .adminInvalidRequest),
            (Self.request("a@example.org", hash: "$2b$16$" + bcrypt.dropFirst(7)), .adminInvalidRequest),
            (Self.request("a@example.org", hash: "$argon2id$v=19$m=1048576,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"), .adminInvalidRequest),
            (Self.request("a@example.org", hash: String(repeating: "x", count: 513)), .adminInvalidRequest),
            (Self.request("not an address", password: "radioactive decay"), .validationFailed),
            (Self.request("a@example.org", password: "short"), .validationFailed),
            (Self.request("a@example.org", details: [:]), .missingAccountValue),
            (Self.request("a@example.org", details: ["name": IdentityFixture.name, "plan": .string("enterprise")]), .validationFailed),
        ]
        for (request, code) in cases {
            #expect(await identityError { try await fixture.store.createAccount(request) }?.code == code, "\(request.userId)")
        }
        let reader = try await fixture.store.createOperatorKey(.init(operatorCall: Operators.call(Operators.bootstrap.text), name: "reader", scopes: [.accountsRead]))
        #expect(await identityError { try await fixture.store.createAccount(Self.request("a@example.org", key: reader.secret.value)) }?.code == .adminScopeMissing)
        #expect(await identityError { try await fixture.store.createAccount(Self.request("a@example.org", key: OperatorKeyText.generate().text)) }?.code == .adminKeyRefused)
        #expect(try await fixture.storage.credential(normalizedUserId: "a@example.org") == nil)
        #expect(try await fixture.events().isEmpty)
    }

    @Test("Profile unavailable: identity.profileUnavailable and no reservation left behind; the userId is free for the next try")
    func profileUnavailable() async throws {
        let fixture = try await Self.fixture()
        fixture.profile.mode = .unavailable
        let refused = await identityError { try await fixture.store.createAccount(Self.request("hahn@example.org", password: "radioactive decay")) }
        #expect(refused?.code == .identityProfileUnavailable)
        #expect(try await fixture.storage.credential(normalizedUserId: "hahn@example.org") == nil)
        fixture.profile.mode = .normal
        let made = try await fixture.store.createAccount(Self.request("hahn@example.org", password: "radioactive decay"))
        #expect(made.record.facts.userId == "hahn@example.org")
    }
}
