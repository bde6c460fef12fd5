import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import Testing

/// Operator keys and the operators' reads through Identity's operations (docs/ADMIN.md).
@Suite("Identity store: operators")
struct IdentityStoreOperatorTests {
    static let bootstrap = OperatorKeyText.generate()

    static func fixture(storage: any IdentityStorage = InMemoryIdentityStorage()) throws -> IdentityFixture {
        var options = IdentityOptions()
        options.bootstrapOperatorKey = bootstrap
        options.throttle = ThrottlePolicy(threshold: 3, baseDelay: .seconds(60))
        return try IdentityFixture(storage: storage, options: options)
    }

    static func call(_ key: String, address: String? = "192.0.2.7") -> IdentityOperatorCall {
        IdentityOperatorCall(key: SecretString(key), clientAddress: address)
    }

    @Test("a key's text round-trips; anything not shaped as one is refused before it is looked up")
    func keyText() throws {
        let key = OperatorKeyText.generate()
        #expect(key.text.count == OperatorKeyText.length && key.text.hasPrefix("kop_"))
        #expect(OperatorKeyText(parsing: key.text) == key)
        #expect(OperatorKeyText.generate() != key)
        let text = key.text
        let head = String(text.prefix(40))
        let upper: String = "kop_" + key.keyId.uppercased() + String(text.dropFirst(36))
        let plus: String = head + "+" + String(text.dropFirst(41))
        let accented: String = head + "é" + String(text.dropFirst(42))
        let bads: [String] = ["", "kop_", String(text.dropLast()), text + "A", "kpo_" + String(text.dropFirst(4)), upper, plus, accented]
        for bad in bads {
            #expect(OperatorKeyText(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test("the bootstrap key holds every scope, is installed once, and a refused key of any kind answers the same code")
    func authorization() async throws {
        let fixture = try Self.fixture()
        #expect(try await fixture.store.installBootstrapOperatorKey())
        #expect(try await fixture.store.installBootstrapOperatorKey() == false)
        let me = try await fixture.store.operatorAuthorize(IdentityOperatorAuthorizeRequest(operatorCall: Self.call(Self.bootstrap.text), scope: .keysWrite))
        #expect(me.keyId == Self.bootstrap.keyId && Set(me.scopes) == Set(OperatorScope.allCases) && me.name == "bootstrap")
        let wrongSecret = OperatorKeyText(keyId: Self.bootstrap.keyId, secret: [UInt8](repeating: 1, count: 32)).text
        let unknown = OperatorKeyText.generate().text
        let reader = try await fixture.store.createOperatorKey(IdentityCreateOperatorKeyRequest(
            operatorCall: Self.call(Self.bootstrap.text), name: "reader", scopes: [.accountsRead], expiresAt: fixture.clock.now.adding(.seconds(60))
        ))
        let revoked = try await fixture.store.createOperatorKey(IdentityCreateOperatorKeyRequest(operatorCall: Self.call(Self.bootstrap.text), name: "gone", scopes: [.accountsRead]))
        _ = try await fixture.store.revokeOperatorKey(IdentityOperatorKeyRequest(operatorCall: Self.call(Self.bootstrap.text), keyId: revoked.key.id))
        for (index, key) in ["nope", wrongSecret, unknown, revoked.secret.value].enumerated() {
            let refusal = await identityError {
                try await fixture.store.operatorAuthorize(IdentityOperatorAuthorizeRequest(operatorCall: Self.call(key, address: "198.51.100.\(index)"), scope: nil))
            }
            #expect(refusal?.code == .adminKeyRefused && refusal?.message == Operators.keyRefused.message, "\(index)")
        }
        // A valid key without the scope: refused for it, nothing done.
        let missing = await identityError {
            try await fixture.store.createOperatorKey(IdentityCreateOperatorKeyRequest(operatorCall: Self.call(reader.secret.value), name: "mine", scopes: [.accountsRead]))
        }
        #expect(missing?.code == .adminScopeMissing)
        #expect(try await fixture.store.listOperatorKeys(IdentityOperatorKeysRequest(operatorCall: Self.call(Self.bootstrap.text))).keys.count == 3)
        // Expired: refused as an unknown key is.
        fixture.clock.advance(by: .seconds(61))
        let expired = await identityError {
            try await fixture.store.operatorAuthorize(IdentityOperatorAuthorizeRequest(operatorCall: Self.call(reader.secret.value), scope: .accountsRead))
        }
        #expect(expired?.code == .adminKeyRefused)
    }

    @Test("refused keys are throttled per client address; another address is not held; a key grants only scopes it holds")
    func throttlingAndScopes() async throws {
        let fixture = try Self.fixture()
        try await fixture.store.installBootstrapOperatorKey()
        let wrong = OperatorKeyText.generate().text
        for _ in 0..<3 {
            #expect(await identityError { try await fixture.store.operatorAuthorize(.init(operatorCall: Self.call(wrong, address: "203.0.113.9"), scope: nil)) }?.code == .adminKeyRefused)
        }
        let held = await identityError { try await fixture.store.operatorAuthorize(.init(operatorCall: Self.call(Self.bootstrap.text, address: "203.0.113.9"), scope: nil)) }
        #expect(held?.code == .throttled && (held?.retryAfterSeconds ?? 0) > 0)
        #expect(try await fixture.store.operatorAuthorize(.init(operatorCall: Self.call(Self.bootstrap.text, address: "203.0.113.10"), scope: nil)).keyId == Self.bootstrap.keyId)

        let keys = try await fixture.store.createOperatorKey(.init(operatorCall: Self.call(Self.bootstrap.text), name: "  key maker  ", scopes: [.keysWrite, .accountsRead, .keysWrite]))
        #expect(keys.key.name == "key maker" && keys.key.scopes == [.accountsRead, .keysWrite] && keys.key.createdBy == Self.bootstrap.keyId)
        // No key makes a stronger one.
        let escalation = await identityError {
            try await fixture.store.createOperatorKey(.init(operatorCall: Self.call(keys.secret.value), name: "root", scopes: [.accountsWrite]))
        }
        #expect(escalation?.code == .adminInvalidRequest && escalation?.message.contains("accounts:write") == true)
        for (name, scopes, expiry) in [("", [OperatorScope.accountsRead], nil), (String(repeating: "x", count: 101), [.accountsRead], nil), ("none", [], nil),
                                       ("past", [.accountsRead], fixture.clock.now),
                                       ("too many", Array(repeating: OperatorScope.accountsRead, count: OperatorScope.allCases.count + 1), nil)] as [(String, [OperatorScope], Timestamp?)] {
            let refusal = await identityError {
                try await fixture.store.createOperatorKey(.init(operatorCall: Self.call(keys.secret.value), name: name, scopes: scopes, expiresAt: expiry))
            }
            #expect(refusal?.code == .adminInvalidRequest, "\(name)")
        }
        #expect(await identityError { try await fixture.store.revokeOperatorKey(.init(operatorCall: Self.call(keys.secret.value), keyId: "nope")) }?.code == .adminKeyNotFound)
    }

    @Test("a key's last use is written at most once a minute")
    func lastUse() async throws {
        let fixture = try Self.fixture()
        try await fixture.store.installBootstrapOperatorKey()
        let start = fixture.clock.now
        _ = try await fixture.store.operatorAuthorize(.init(operatorCall: Self.call(Self.bootstrap.text), scope: nil))
        fixture.clock.advance(by: .seconds(30))
        _ = try await fixture.store.operatorAuthorize(.init(operatorCall: Self.call(Self.bootstrap.text), scope: nil))
        #expect(try await fixture.storage.operatorKey(id: Self.bootstrap.keyId)?.lastUsedAt == start)
        fixture.clock.advance(by: .seconds(31))
        _ = try await fixture.store.operatorAuthorize(.init(operatorCall: Self.call(Self.bootstrap.text), scope: nil))
        #expect(try await fixture.storage.operatorKey(id: Self.bootstrap.keyId)?.lastUsedAt == start.adding(.seconds(61)))
    }

    @Test("a search pages with Konto's cursors and refuses others, bounds its limit and texts; a record is the account's, never its secrets")
    func searchAndRecord() async throws {
        let fixture = try Self.fixture()
        try await fixture.store.installBootstrapOperatorKey()
        var made: [IdentityAccountSession] = []
        for name in ["ada", "grace", "alan"] {
            made.append(try await fixture.signUp("\(name)@example.org"))
            fixture.clock.advance(by: .seconds(1))
        }
        let call = Self.call(Self.bootstrap.text)
        let first = try await fixture.store.searchAccounts(.init(operatorCall: call, userIdContains: " EXAMPLE.ORG ", limit: 2))
        #expect(first.accounts.map(\.userId) == ["alan@example.org", "grace@example.org"] && first.totalEstimate == 3 && first.totalIsExact)
        let cursor = try #require(first.nextCursor)
        let second = try await fixture.store.searchAccounts(.init(operatorCall: call, userIdContains: "example.org", cursor: cursor, limit: 2))
        #expect(second.accounts.map(\.userId) == ["ada@example.org"] && second.nextCursor == nil)
        for refused in [IdentityAccountSearchRequest(operatorCall: call, cursor: "%%%"), .init(operatorCall: call, cursor: AccountSearchCursor.encode(.init(createdAt: .now, accountId: "")) ),
                        .init(operatorCall: call, limit: 0), .init(operatorCall: call, limit: 201), .init(operatorCall: call, userIdContains: ""),
                        .init(operatorCall: call, userIdPrefix: String(repeating: "a", count: 321)),
                        .init(operatorCall: call, userIdContains: "a\u{0}b"), .init(operatorCall: call, provider: "\u{0}")] {
            #expect(await identityError { try await fixture.store.searchAccounts(refused) }?.code == .adminInvalidRequest)
        }
        let record = try await fixture.store.accountRecord(.init(operatorCall: call, accountId: made[1].accountId))
        #expect(record.facts.userId == "grace@example.org" && record.hasPassword && record.sessionCount == 1)
        // Nothing the record carries is a secret: its JSON holds no hash, token or session.
        let json = String(decoding: try JSONEncoder().encode(record), as: UTF8.self)
        #expect(!json.contains("argon2") && !json.contains(made[1].session.token.value))
        #expect(await identityError { try await fixture.store.accountRecord(.init(operatorCall: call, accountId: "nobody")) }?.code == .notFound)
    }

    @Test("a disabled account: its sessions end; its right password is refused as a wrong one (and counted); no reset is mailed; enabled, it signs in")
    func disabling() async throws {
        let fixture = try Self.fixture()
        try await fixture.store.installBootstrapOperatorKey()
        let made = try await fixture.signUp()
        let call = Self.call(Self.bootstrap.text)
        let done = try await fixture.store.disableAccount(.init(operatorCall: call, accountId: made.accountId))
        #expect(done.eventIds?.count == 2)
        #expect(try await fixture.events().suffix(2).map(\.kind) == [.accountDisabled, .sessionsRevoked])
        #expect(await identityError { try await fixture.store.validateSession(IdentitySessionRequest(token: made.session.token)) }?.code == .unauthenticated)
        let right = await identityError { try await fixture.login(address: "203.0.113.1") }
        let wrong = await identityError { try await fixture.login(password: "not the password", address: "203.0.113.2") }
        #expect(right == wrong && right?.code == .wrongCredentials)
        let unknown = await identityError { try await fixture.login("nobody@stanford.edu", address: "203.0.113.3") }
        #expect(right == unknown)
        // No reset mail for it: the answer is the same as for an unknown userId, and the outbox has no new request.
        let mails = try await fixture.events().count
        _ = try await fixture.store.requestPasswordReset(IdentityPasswordResetRequest(userId: "leland@stanford.edu"))
        #expect(try await fixture.events().count == mails)
        // Again: nothing changes.
        #expect(try await fixture.store.disableAccount(.init(operatorCall: call, accountId: made.accountId)).eventIds == [])
        // A key that may only read accounts cannot disable one.
        let reader = try await fixture.store.createOperatorKey(.init(operatorCall: call, name: "reader", scopes: [.accountsRead]))
        #expect(await identityError { try await fixture.store.enableAccount(.init(operatorCall: Self.call(reader.secret.value), accountId: made.accountId)) }?.code == .adminScopeMissing)
        #expect(try await fixture.store.enableAccount(.init(operatorCall: call, accountId: made.accountId)).eventIds?.count == 1)
        #expect(try await fixture.login(address: "203.0.113.4").accountId == made.accountId)
        #expect(await identityError { try await fixture.store.disableAccount(.init(operatorCall: call, accountId: "nobody")) }?.code == .notFound)
    }
}
