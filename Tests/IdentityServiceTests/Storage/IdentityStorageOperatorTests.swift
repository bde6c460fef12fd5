import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import Testing

/// Operator keys and the operators' account reads on every storage.
@Suite("Identity storage: operators")
struct IdentityStorageOperatorTests {
    typealias Conformance = IdentityStorageConformanceTests

    static func key(_ id: String, scopes: [OperatorScope] = [.accountsRead], at time: Timestamp = Conformance.t0) -> StoredOperatorKey {
        StoredOperatorKey(id: id, name: "key \(id.prefix(4))", scopes: scopes, secretHash: [UInt8](repeating: 7, count: 32), createdAt: time)
    }

    static let first = String(repeating: "a", count: 32)
    static let second = String(repeating: "b", count: 32)

    @Test("keys are stored once, listed oldest first, revoked once (the first time stays), touched; the bootstrap only into an empty table", arguments: IdentityStorageKind.allCases)
    func keys(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            #expect(try await storage.createOperatorKey(Self.key(Self.first, scopes: OperatorScope.allCases), onlyIfNone: true))
            // The bootstrap is used once: any key there ends it.
            #expect(try await storage.createOperatorKey(Self.key(Self.second), onlyIfNone: true) == false)
            #expect(try await storage.createOperatorKey(Self.key(Self.first), onlyIfNone: false) == false)
            var later = Self.key(Self.second, at: Conformance.t0.adding(.seconds(5)))
            later.createdBy = Self.first
            later.expiresAt = Conformance.t0.adding(.seconds(3_600))
            #expect(try await storage.createOperatorKey(later, onlyIfNone: false))
            #expect(try await storage.operatorKeys() == [Self.key(Self.first, scopes: OperatorScope.allCases), later])
            #expect(try await storage.operatorKey(id: Self.second) == later)
            #expect(try await storage.operatorKey(id: String(repeating: "c", count: 32)) == nil)
            try await storage.touchOperatorKey(id: Self.second, at: Conformance.t0.adding(.seconds(10)))
            // A touch never moves the last use back.
            try await storage.touchOperatorKey(id: Self.second, at: Conformance.t0.adding(.seconds(8)))
            #expect(try await storage.operatorKey(id: Self.second)?.lastUsedAt == Conformance.t0.adding(.seconds(10)))
            #expect(try await storage.revokeOperatorKey(id: Self.second, at: Conformance.t0.adding(.seconds(20))) == .revoked)
            #expect(try await storage.revokeOperatorKey(id: Self.second, at: Conformance.t0.adding(.seconds(30))) == .revoked)
            #expect(try await storage.operatorKey(id: Self.second)?.revokedAt == Conformance.t0.adding(.seconds(20)))
            #expect(try await storage.revokeOperatorKey(id: String(repeating: "c", count: 32), at: Conformance.t0) == .notFound)
            // The first is the last live key holding keys:write.
            #expect(try await storage.revokeOperatorKey(id: Self.first, at: Conformance.t0.adding(.seconds(40))) == .lastKeyManager)
            #expect(try await storage.operatorKey(id: Self.first)?.revokedAt == nil)
        }
    }

    @Test("of the live keys holding keys:write revoked all at once, exactly one stays, in every round (real tasks)", arguments: IdentityStorageKind.allCases)
    func lastManagerRace(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            var survivor: String?
            for round in 0..<8 {
                let made = (0..<(survivor == nil ? 4 : 3)).map { String(format: "%02x", round) + String(repeating: "d", count: 29) + "\($0)" }
                for id in made {
                    #expect(try await storage.createOperatorKey(Self.key(id, scopes: [.keysWrite]), onlyIfNone: false))
                }
                // The last round's survivor and the new ones: every live manager, each revoked by a task of its own.
                let ids = made + (survivor.map { [$0] } ?? [])
                let outcomes = try await withThrowingTaskGroup(of: (String, OperatorKeyRevocation).self) { group in
                    for id in ids {
                        group.addTask { (id, try await storage.revokeOperatorKey(id: id, at: Conformance.t0.adding(.seconds(60)))) }
                    }
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                }
                #expect(outcomes.values.filter { $0 == .revoked }.count == ids.count - 1, "round \(round): \(outcomes)")
                let live = try await storage.operatorKeys().filter { $0.revokedAt == nil && $0.scopes.contains(.keysWrite) }.map(\.id)
                #expect(live.count == 1 && outcomes[live[0]] == .lastKeyManager, "round \(round): \(outcomes), live \(live)")
                survivor = live.first
            }
        }
    }

    /// Six accounts a second apart (newest last): a verified one, an anonymous one, one with a passkey (and one with an
    /// unconfirmed app only), one linked to a provider, one whose userId holds LIKE's characters.
    static func accounts(_ storage: any IdentityStorage) async throws {
        let userIds: [String?] = ["Ada@Example.org", nil, "grace@example.org", "alan@example.org", "edsger@example.net", "100%_sure@example.org"]
        for (index, userId) in userIds.enumerated() {
            let id = "acct-\(index)"
            try await storage.reserveAccount(Conformance.credential(id, userId, at: Conformance.t0.adding(.seconds(Int64(index)))))
            try await storage.activateAccount(accountId: id, session: Conformance.session("s-\(id)", account: id, byte: UInt8(index + 1)), events: [])
        }
        let token = [UInt8](repeating: 9, count: 32)
        try await storage.createEmailVerification(tokenHash: token, accountId: "acct-0", address: "Ada@Example.org", expiresAt: Conformance.t0.adding(.seconds(600)), events: [])
        #expect(try await storage.confirmEmailVerification(tokenHash: token, accountId: nil, at: Conformance.t0.adding(.seconds(1)), events: { _ in [] }) == "acct-0")
        let passkey = StoredFactor(
            id: "f-passkey", accountId: "acct-2", kind: .passkey, name: "YubiKey", sealedSecret: [1], confirmed: true, createdAt: Conformance.t0,
            credentialId: [1, 2, 3], signCount: 0
        )
        #expect(try await storage.addPasskey(passkey, events: []))
        try await storage.addPendingFactor(StoredFactor(id: "f-app", accountId: "acct-3", kind: .totp, name: "App", sealedSecret: [2], confirmed: false, createdAt: Conformance.t0))
        #expect(try await storage.addExternalIdentity(IdentityStorageExternalIdentityTests.identity("i-4", account: "acct-4", subject: "s4", provider: "apple"), events: []))
        _ = try await storage.rememberClients(accountId: "acct-2", clients: [[UInt8](repeating: 4, count: 32)], at: Conformance.t0.adding(.seconds(60)))
    }

    static func ids(_ result: AccountSearchResult) -> [String] { result.accounts.map(\.accountId) }

    @Test("a search takes every filter, newest first; userIds by prefix and case-insensitive substring, LIKE's characters as themselves", arguments: IdentityStorageKind.allCases)
    func search(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.accounts(storage)
            func search(_ search: AccountSearch) async throws -> [String] {
                Self.ids(try await storage.searchAccounts(search, countLimit: 100))
            }
            #expect(try await search(AccountSearch(limit: 50)) == ["acct-5", "acct-4", "acct-3", "acct-2", "acct-1", "acct-0"])
            #expect(try await search(AccountSearch(userIdPrefix: "a", limit: 50)) == ["acct-3", "acct-0"])
            #expect(try await search(AccountSearch(userIdContains: "example.org", limit: 50)) == ["acct-5", "acct-3", "acct-2", "acct-0"])
            #expect(try await search(AccountSearch(userIdContains: "ada@ex", limit: 50)) == ["acct-0"])
            // `%` and `_` match only themselves.
            #expect(try await search(AccountSearch(userIdContains: "%_", limit: 50)) == ["acct-5"])
            #expect(try await search(AccountSearch(userIdContains: "_", limit: 50)) == ["acct-5"])
            #expect(try await search(AccountSearch(userIdContains: "\\", limit: 50)) == [])
            #expect(try await search(AccountSearch(verified: true, limit: 50)) == ["acct-0"])
            #expect(try await search(AccountSearch(verified: false, anonymous: false, limit: 50)) == ["acct-5", "acct-4", "acct-3", "acct-2"])
            #expect(try await search(AccountSearch(anonymous: true, limit: 50)) == ["acct-1"])
            #expect(try await search(AccountSearch(createdAfter: Conformance.t0.adding(.seconds(2)), createdBefore: Conformance.t0.adding(.seconds(4)), limit: 50)) == ["acct-3", "acct-2"])
            // A confirmed app or passkey counts; an app awaiting its first code does not.
            #expect(try await search(AccountSearch(hasSecondFactor: true, limit: 50)) == ["acct-2"])
            #expect(try await search(AccountSearch(hasSecondFactor: false, limit: 50)).count == 5)
            #expect(try await search(AccountSearch(provider: "apple", limit: 50)) == ["acct-4"])
            #expect(try await search(AccountSearch(userIdContains: "example", provider: "apple", limit: 50)) == ["acct-4"])
            // Pages: after the last one seen, the total unchanged.
            let page = try await storage.searchAccounts(AccountSearch(limit: 4), countLimit: 100)
            #expect(Self.ids(page) == ["acct-5", "acct-4", "acct-3", "acct-2"] && page.total == 6 && page.totalIsExact)
            let last = try #require(page.accounts.last)
            let next = try await storage.searchAccounts(AccountSearch(after: AccountSearchPosition(createdAt: last.createdAt, accountId: last.accountId), limit: 4), countLimit: 100)
            #expect(Self.ids(next) == ["acct-1", "acct-0"] && next.total == 6)
            // Above the count's limit the total is an estimate, never below what was counted.
            let estimated = try await storage.searchAccounts(AccountSearch(limit: 1), countLimit: 3)
            #expect(estimated.total >= 4 && (kind == .inMemory ? estimated.totalIsExact : !estimated.totalIsExact))
            let summary = try #require(try await storage.searchAccounts(AccountSearch(userIdPrefix: "ada", limit: 1), countLimit: 10).accounts.first)
            #expect(summary == IdentityAccountSummary(accountId: "acct-0", userId: "Ada@Example.org", anonymous: false, verified: true, createdAt: Conformance.t0))
        }
    }

    @Test("a search finds no pending sign-up, and accounts with the same creation time in a stable order across pages", arguments: IdentityStorageKind.allCases)
    func ties(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            for index in 0..<7 {
                let id = "tie-\(index)"
                try await storage.reserveAccount(Conformance.credential(id, "\(id)@example.org"))
                try await storage.activateAccount(accountId: id, session: Conformance.session("s-\(id)", account: id, byte: UInt8(index + 1)), events: [])
            }
            try await storage.reserveAccount(Conformance.credential("pending", "pending@example.org"))
            var seen: [String] = []
            var after: AccountSearchPosition?
            repeat {
                let page = try await storage.searchAccounts(AccountSearch(after: after, limit: 3), countLimit: 100)
                #expect(page.total == 7)
                seen += Self.ids(page)
                after = page.accounts.count == 3 ? page.accounts.last.map { AccountSearchPosition(createdAt: $0.createdAt, accountId: $0.accountId) } : nil
            } while after != nil
            #expect(seen == (0..<7).reversed().map { "tie-\($0)" })
        }
    }

    @Test("an account's record: facts, password, confirmed factors, identities, sessions, last sign-in; none for a pending or unknown account", arguments: IdentityStorageKind.allCases)
    func record(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.accounts(storage)
            let grace = try #require(try await storage.accountRecord(accountId: "acct-2", userIdType: .emailAddress))
            #expect(grace.facts.userId == "grace@example.org" && grace.facts.emailVerified == false && grace.hasPassword)
            #expect(grace.factors == [IdentityAccountRecord.Factor(id: "f-passkey", kind: "passkey", name: "YubiKey", createdAt: Conformance.t0)])
            #expect(grace.sessionCount == 1 && grace.lastSignInAt == Conformance.t0.adding(.seconds(60)) && grace.identities.isEmpty)
            let alan = try #require(try await storage.accountRecord(accountId: "acct-3", userIdType: .emailAddress))
            #expect(alan.factors.isEmpty && alan.lastSignInAt == nil)
            let edsger = try #require(try await storage.accountRecord(accountId: "acct-4", userIdType: .emailAddress))
            #expect(edsger.identities.map(\.provider) == ["apple"] && edsger.identities.first?.id == "i-4")
            let ada = try #require(try await storage.accountRecord(accountId: "acct-0", userIdType: .emailAddress))
            #expect(ada.facts.emailVerified == true && ada.verifiedAt == Conformance.t0.adding(.seconds(1)))
            let anonymous = try #require(try await storage.accountRecord(accountId: "acct-1", userIdType: .emailAddress))
            #expect(anonymous.facts.isAnonymous && !anonymous.hasPassword)
            try await storage.reserveAccount(Conformance.credential("pending", "pending@example.org"))
            #expect(try await storage.accountRecord(accountId: "pending", userIdType: .emailAddress) == nil)
            #expect(try await storage.accountRecord(accountId: "nobody", userIdType: .emailAddress) == nil)
        }
    }

    @Test("disabling raises the credential version, ends sessions, reset tokens and codes with its events; again changes nothing; enabling keeps the rest", arguments: IdentityStorageKind.allCases)
    func disabling(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await storage.createSession(Conformance.session("s2", account: "a1", byte: 2), events: [])
            try await storage.createResetToken(tokenHash: [UInt8](repeating: 5, count: 32), accountId: "a1", expiresAt: Conformance.t0.adding(.seconds(600)), events: [])
            let before = try #require(try await storage.credential(accountId: "a1"))
            let events = [Conformance.event("a1", .accountDisabled), Conformance.event("a1", .sessionsRevoked)]
            #expect(try await storage.setAccountDisabled(accountId: "a1", disabled: true, at: Conformance.t0.adding(.seconds(5)), events: events) == .changed(sessionsEnded: 2))
            let after = try #require(try await storage.credential(accountId: "a1"))
            #expect(after.disabledAt == Conformance.t0.adding(.seconds(5)) && after.credentialVersion == before.credentialVersion + 1)
            #expect(try await storage.session(tokenHash: [UInt8](repeating: 1, count: 32)) == nil)
            #expect(try await storage.resetTokenAccount(tokenHash: [UInt8](repeating: 5, count: 32), at: Conformance.t0) == nil)
            #expect(try await storage.pendingEvents(limit: 10).suffix(2).map(\.kind) == [.accountDisabled, .sessionsRevoked])
            // A session made under the version read before the disabling is not stored.
            await #expect { try await storage.createSession(Conformance.session("late", account: "a1", byte: 3, version: before.credentialVersion), events: []) } throws: { error in
                (error as? IdentityStorageError)?.code == .notFound
            }
            #expect(try await storage.setAccountDisabled(accountId: "a1", disabled: true, at: Conformance.t0.adding(.seconds(9)), events: events) == .unchanged)
            #expect(try await storage.credential(accountId: "a1")?.disabledAt == Conformance.t0.adding(.seconds(5)))
            #expect(Self.ids(try await storage.searchAccounts(AccountSearch(disabled: true, limit: 10), countLimit: 10)) == ["a1"])
            #expect(try await storage.accountRecord(accountId: "a1", userIdType: .emailAddress)?.disabledAt == Conformance.t0.adding(.seconds(5)))
            #expect(try await storage.setAccountDisabled(accountId: "a1", disabled: false, at: Conformance.t0, events: [Conformance.event("a1", .accountEnabled)]) == .changed(sessionsEnded: 0))
            let enabled = try #require(try await storage.credential(accountId: "a1"))
            #expect(enabled.disabledAt == nil && enabled.credentialVersion == after.credentialVersion)
            #expect(try await storage.searchAccounts(AccountSearch(disabled: true, limit: 10), countLimit: 10).accounts.isEmpty)
            #expect(try await storage.setAccountDisabled(accountId: "nobody", disabled: true, at: Conformance.t0, events: []) == .notFound)
        }
    }

    @Test("an account's sessions: those under its current credential version, oldest first; none for an unknown or pending account", arguments: IdentityStorageKind.allCases)
    func sessions(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await storage.createSession(Conformance.session("s2", account: "a1", byte: 2, at: Conformance.t0.adding(.seconds(1))), events: [])
            try await Conformance.account(storage, "a2", "jane@stanford.edu", sessionByte: 3)
            #expect(try await storage.accountSessions(accountId: "a1")?.map(\.id) == ["s-a1", "s2"])
            #expect(try await storage.accountSessions(accountId: "a1")?.first?.assuranceLevel == 1)
            // Ended under a new credential version: the old ones are no longer the account's sessions.
            _ = try await storage.setAccountDisabled(accountId: "a1", disabled: true, at: Conformance.t0, events: [])
            #expect(try await storage.accountSessions(accountId: "a1") == [])
            #expect(try await storage.accountSessions(accountId: "nobody") == nil)
            try await storage.reserveAccount(Conformance.credential("pending", "pending@example.org"))
            #expect(try await storage.accountSessions(accountId: "pending") == nil)
        }
    }
}
