import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import Testing

/// Accounts an operator makes and changes (docs/ADMIN.md, "Creating and importing accounts", "Changing an
/// account"), through Identity's operations.
@Suite("Identity store: accounts an operator makes and changes")
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

    @Test("a burst of wrong passwords at an imported (costlier) hash from many tasks at once: each is counted before its hash runs, so no more are verified than the throttle allows, round after round", arguments: IdentityStorageKind.allCases)
    func importedHashBurst(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage: storage)
            let bcrypt = "$2b$10$LJwEItx6gQTMYxSM2i.PIuzy3CLoj3A3sKVfJfppgoauDP69J0glC"
            for round in 0..<4 {
                let userId = "burst\(round)@example.org"
                let accountId = try await fixture.store.createAccount(Self.request(userId, hash: bcrypt)).record.facts.accountId
                let outcomes = await withTaskGroup(of: KontoErrorCode?.self) { group in
                    for _ in 0..<12 {
                        group.addTask { await identityError { try await fixture.login(userId, password: "not the password at all", address: nil) }?.code }
                    }
                    return await group.reduce(into: [KontoErrorCode?]()) { $0.append($1) }
                }
                #expect(outcomes.allSatisfy { $0 == .wrongCredentials || $0 == .throttled }, "round \(round): \(outcomes)")
                let verified = try await storage.auditEntries(AuditQuery(type: "signIn.failed", limit: 100)).filter { $0.record.accountId == accountId }.count
                // Each verified attempt is one refusal as a wrong password, with its audit entry; the throttle (3 here)
                // bounds them, however many came at once.
                #expect(verified == outcomes.filter { $0 == .wrongCredentials }.count && (1...3).contains(verified), "round \(round): \(verified) verified of 12")
            }
        }
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
            // Past what a sign-in may cost (PasswordHash.ImportBounds): the hashes that exhausted a 512 MiB pod.
            (Self.request("a@example.org", hash: "$argon2id$v=19$m=262144,t=16,p=16$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"), .adminInvalidRequest),
            (Self.request("a@example.org", hash: "$argon2id$v=19$m=131072,t=5,p=1$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"), .adminInvalidRequest),
            (Self.request("a@example.org", hash: "$argon2id$v=19$m=65536,t=3,p=9$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"), .adminInvalidRequest),
            (Self.request("a@example.org", hash: "$2b$14$" + bcrypt.dropFirst(7)), .adminInvalidRequest),
            (Self.request("a@example.org", hash: "$pbkdf2-sha256$i=2000001$c2FsdHNhbHRzYWx0c2FsdA$MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"), .adminInvalidRequest),
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

    static func change(
        _ accountId: String, userId: String? = nil, verified: Bool? = nil, set: [String: AccountValue]? = nil, remove: Set<String> = [],
        key: String = Operators.bootstrap.text
    ) -> IdentityUpdateAccountRequest {
        IdentityUpdateAccountRequest(
            operatorCall: Operators.call(key), accountId: accountId, userId: userId, verified: verified,
            modifications: set == nil && remove.isEmpty ? nil : AccountModifications(set: AccountDetails(values: set ?? [:]), remove: remove)
        )
    }

    @Test("a change: details with server-owned keys, then a new userId (sessions end, the previous address told, the new one mailed unless verified), then verified", arguments: IdentityStorageKind.allCases)
    func changes(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let fixture = try await Self.fixture(storage: storage)
            let owner = try await fixture.signUp()
            let changed = try await fixture.store.updateAccount(Self.change(owner.accountId, set: ["plan": .string("pro")]))
            #expect(changed.profile.details.storedValues["plan"] == .string("pro") && changed.eventIds == nil)
            // The session lives on: details are no credential.
            _ = try await fixture.validate(owner.session.token)

            let before = try await fixture.events().count
            let moved = try await fixture.store.updateAccount(Self.change(owner.accountId, userId: "Leland@Palo-Alto.example"))
            #expect(moved.record.facts.userId == "Leland@Palo-Alto.example" && moved.record.facts.emailVerified == false && moved.record.sessionCount == 0)
            #expect(await identityError { try await fixture.validate(owner.session.token) }?.code == .unauthenticated)
            let events = try await fixture.events().dropFirst(before)
            #expect(events.contains { $0.kind == .userIdChanged(previous: "leland@stanford.edu", new: "Leland@Palo-Alto.example") })
            let mails = events.compactMap { if case let .mailRequested(request) = $0.kind { request } else { nil } }
            #expect(mails.map(\.message) == [.emailChanged, .verifyEmail] && mails.map(\.to) == ["leland@stanford.edu", "Leland@Palo-Alto.example"])
            #expect(Set(moved.eventIds ?? []).isSubset(of: Set(events.map(\.id))) && moved.eventIds?.count == 3)
            _ = try await fixture.login("leland@palo-alto.example", address: "203.0.113.20")
            #expect(await identityError { try await fixture.login(address: "203.0.113.21") }?.code == .wrongCredentials)

            let verified = try await fixture.store.updateAccount(Self.change(owner.accountId, verified: true))
            #expect(verified.record.facts.emailVerified == true && verified.record.verifiedAt != nil && verified.eventIds?.count == 1)
            // Verified again: nothing more to write.
            #expect(try await fixture.store.updateAccount(Self.change(owner.accountId, verified: true)).eventIds == nil)
            let entries = try await IdentityStoreAuditTests.entries(fixture, accountId: owner.accountId)
            for type in ["userId.changed", "email.verified", "admin.updateAccount"] {
                #expect(entries.contains { $0.type == type && $0.actorType == .operator }, "\(type)")
            }
        }
    }

    @Test("refusals before anything changes: nothing given, verified false, credentials among the details, a taken or invalid userId, an anonymous or unknown account, a missing scope; Profile's own refusal")
    func changeRefusals() async throws {
        let fixture = try await Self.fixture()
        let owner = try await fixture.signUp()
        let other = try await fixture.signUp("mallory@example.org")
        let anonymous = try await fixture.store.signInAnonymously(IdentityClientRequest())
        let reader = try await fixture.store.createOperatorKey(.init(operatorCall: Operators.call(Operators.bootstrap.text), name: "reader", scopes: [.accountsRead]))
        let cases: [(IdentityUpdateAccountRequest, KontoErrorCode)] = [
            (Self.change(owner.accountId), .adminInvalidRequest),
            (Self.change(owner.accountId, set: [:]), .adminInvalidRequest),
            (Self.change(owner.accountId, verified: false), .adminInvalidRequest),
            (Self.change(owner.accountId, set: ["password": .string("sneaky password")]), .validationFailed),
            (Self.change(owner.accountId, remove: ["userId"]), .validationFailed),
            (Self.change(owner.accountId, userId: "MALLORY@example.org", set: ["plan": .string("pro")]), .credentialsTaken),
            (Self.change(owner.accountId, userId: "not an address"), .validationFailed),
            (Self.change(anonymous.accountId, verified: true), .adminInvalidRequest),
            (Self.change("nobody", verified: true), .notFound),
            (Self.change(owner.accountId, verified: true, key: reader.secret.value), .adminScopeMissing),
        ]
        let before = try await fixture.events().count
        for (request, code) in cases {
            #expect(await identityError { try await fixture.store.updateAccount(request) }?.code == code, "\(request.userId ?? "") \(String(describing: request.verified))")
        }
        #expect(try await fixture.events().count == before)
        #expect(fixture.profile.profiles[owner.accountId]?.storedValues["plan"] == nil)
        #expect(try await fixture.storage.credential(accountId: other.accountId)?.userId == "mallory@example.org")
        fixture.profile.mode = .unavailable
        #expect(await identityError { try await fixture.store.updateAccount(Self.change(owner.accountId, userId: "x@example.org", set: ["plan": .string("pro")])) }?.code == .identityProfileUnavailable)
        fixture.profile.mode = .normal
        #expect(try await fixture.storage.credential(accountId: owner.accountId)?.userId == "leland@stanford.edu")
    }
}
