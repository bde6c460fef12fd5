import Foundation
@testable import IdentityService
import KontoModel
import Testing

/// External identities, used nonces and provider token revocations on every storage.
@Suite("Identity storage: external identities")
struct IdentityStorageExternalIdentityTests {
    typealias Conformance = IdentityStorageConformanceTests

    static func identity(_ id: String, account: String, subject: String, provider: String = "test", sealed: [UInt8]? = nil) -> StoredExternalIdentity {
        StoredExternalIdentity(
            id: id, accountId: account, provider: provider, subject: subject, email: "\(subject)@example.org", emailVerified: true,
            createdAt: Conformance.t0, lastUsedAt: nil, sealedRefreshToken: sealed
        )
    }

    @Test("an identity is linked once, found by provider and subject with its account, listed, touched and unlinked with its events", arguments: IdentityStorageKind.allCases)
    func linking(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Conformance.account(storage, "a2", "jane@stanford.edu", sessionByte: 2)
            #expect(try await storage.addExternalIdentity(Self.identity("i1", account: "a1", subject: "s1"), events: [Conformance.event("a1", .identityLinked(identityId: "i1", provider: "test"))]))
            #expect(try await storage.pendingEvents(limit: 10).last?.kind == .identityLinked(identityId: "i1", provider: "test"))
            // The same subject again, for either account: refused.
            #expect(try await storage.addExternalIdentity(Self.identity("i2", account: "a2", subject: "s1"), events: []) == false)
            #expect(try await storage.addExternalIdentity(Self.identity("i2", account: "a1", subject: "s1"), events: []) == false)
            // Another provider's subject of the same name is another identity.
            #expect(try await storage.addExternalIdentity(Self.identity("i3", account: "a1", subject: "s1", provider: "apple"), events: []))
            await #expect { try await storage.addExternalIdentity(Self.identity("i4", account: "missing", subject: "s4"), events: []) } throws: { error in
                (error as? IdentityStorageError)?.code == .notFound
            }
            let found = try #require(try await storage.externalIdentity(provider: "test", subject: "s1"))
            #expect(found.identity == Self.identity("i1", account: "a1", subject: "s1") && found.credential.accountId == "a1")
            #expect(try await storage.externalIdentity(provider: "test", subject: "nobody") == nil)
            #expect(try await storage.externalIdentities(accountId: "a1").map(\.id).sorted() == ["i1", "i3"])
            try await storage.touchExternalIdentity(id: "i1", email: "new@example.org", emailVerified: false, at: Conformance.t0.adding(.seconds(9)), sealedRefreshToken: [7, 7])
            let touched = try #require(try await storage.externalIdentity(provider: "test", subject: "s1")).identity
            #expect(touched.email == "new@example.org" && !touched.emailVerified && touched.lastUsedAt == Conformance.t0.adding(.seconds(9)) && touched.sealedRefreshToken == [7, 7])
            // Touching without a token keeps the one there.
            try await storage.touchExternalIdentity(id: "i1", email: nil, emailVerified: false, at: Conformance.t0, sealedRefreshToken: nil)
            #expect(try await storage.externalIdentity(provider: "test", subject: "s1")?.identity.sealedRefreshToken == [7, 7])
            #expect(try await storage.removeExternalIdentity(accountId: "a2", identityId: "i1", keepingWayIn: true, events: []) == .notFound)
            let removed = try await storage.removeExternalIdentity(accountId: "a1", identityId: "i1", keepingWayIn: true, events: [Conformance.event("a1", .identityUnlinked(identityId: "i1", provider: "test"))])
            guard case let .removed(identity) = removed else { Issue.record("not removed: \(removed)"); return }
            #expect(identity.id == "i1")
            #expect(try await storage.pendingEvents(limit: 10).last?.kind == .identityUnlinked(identityId: "i1", provider: "test"))
            // Its kept token goes to be revoked.
            let due = try await storage.dueRevocations(at: Conformance.t0.adding(.seconds(3_600)), leaseUntil: Conformance.t0.adding(.seconds(3_660)), limit: 10)
            #expect(due.map(\.sealedToken) == [[7, 7]] && due.first?.accountId == "a1" && due.first?.identityId == "i1")
        }
    }

    @Test("without a password the last identity stays; two concurrent unlinks of the last two leave one", arguments: IdentityStorageKind.allCases)
    func lastWayIn(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            for round in 0..<20 {
                let account = "p\(round)"
                var credential = Conformance.credential(account, "p\(round)@example.org")
                credential.passwordHash = nil
                try await storage.reserveAccount(credential)
                try await storage.activateAccount(accountId: account, session: Conformance.session("s-\(account)", account: account, byte: UInt8(100 + round)), events: [])
                #expect(try await storage.addExternalIdentity(Self.identity("\(account)-x", account: account, subject: "\(account)-x"), events: []))
                #expect(try await storage.addExternalIdentity(Self.identity("\(account)-y", account: account, subject: "\(account)-y"), events: []))
                let outcomes = try await withThrowingTaskGroup(of: ExternalIdentityRemoval.self) { group in
                    for suffix in ["x", "y"] {
                        group.addTask { try await storage.removeExternalIdentity(accountId: account, identityId: "\(account)-\(suffix)", keepingWayIn: true, events: []) }
                    }
                    return try await group.reduce(into: [ExternalIdentityRemoval]()) { $0.append($1) }
                }
                #expect(outcomes.filter { if case .removed = $0 { true } else { false } }.count == 1, "round \(round): \(outcomes)")
                #expect(outcomes.contains(.lastSignInMethod))
                #expect(try await storage.externalIdentities(accountId: account).count == 1)
            }
            // Without the rule (a rolled-back sign-up), it goes.
            let last = try await storage.externalIdentities(accountId: "p0")[0]
            guard case .removed = try await storage.removeExternalIdentity(accountId: "p0", identityId: last.id, keepingWayIn: false, events: []) else {
                Issue.record("kept"); return
            }
        }
    }

    @Test("a nonce is used once, even by racing uses; expired ones are pruned", arguments: IdentityStorageKind.allCases)
    func nonces(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            for round in 0..<20 {
                let digest = [UInt8](repeating: UInt8(round), count: 32)
                let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<6 {
                        group.addTask { try await storage.useNonce(digest: digest, expiresAt: Conformance.t0.adding(.seconds(600))) }
                    }
                    return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
                }
                #expect(wins == 1, "round \(round)")
            }
            _ = try await storage.pruneExpired(at: Conformance.t0.adding(.seconds(601)), profileCleanupAt: Conformance.t0, limit: 1_000) { _ in [] }
            // Forgotten once expired (the token it came from is no longer accepted anyway).
            #expect(try await storage.useNonce(digest: [UInt8](repeating: 0, count: 32), expiresAt: Conformance.t0.adding(.seconds(1_200))))
        }
    }

    @Test("deleting an account keeps its kept tokens for revocation, leased to one sweeper at a time, retried, finished or given up", arguments: IdentityStorageKind.allCases)
    func revocations(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            #expect(try await storage.addExternalIdentity(Self.identity("i1", account: "a1", subject: "s1", sealed: [1, 2, 3]), events: []))
            #expect(try await storage.addExternalIdentity(Self.identity("i2", account: "a1", subject: "s2"), events: []))
            #expect(try await storage.deleteAccount(accountId: "a1", events: [], profileCleanupAt: Conformance.t0))
            #expect(try await storage.externalIdentity(provider: "test", subject: "s1") == nil)
            let now = Timestamp(Date())
            let due = try await storage.dueRevocations(at: now, leaseUntil: now.adding(.seconds(60)), limit: 10)
            #expect(due == [StoredRevocation(id: "i1", provider: "test", accountId: "a1", identityId: "i1", sealedToken: [1, 2, 3])])
            // Leased: not due again meanwhile.
            #expect(try await storage.dueRevocations(at: now, leaseUntil: now.adding(.seconds(60)), limit: 10).isEmpty)
            try await storage.failRevocation(id: "i1", attempts: 1, retryAt: now.adding(.seconds(5)), at: now)
            #expect(try await storage.dueRevocations(at: now.adding(.seconds(4)), leaseUntil: now.adding(.seconds(60)), limit: 10).isEmpty)
            let retried = try await storage.dueRevocations(at: now.adding(.seconds(5)), leaseUntil: now.adding(.seconds(65)), limit: 10)
            #expect(retried.map(\.attempts) == [1])
            try await storage.failRevocation(id: "i1", attempts: 2, retryAt: nil, at: now.adding(.seconds(10)))
            #expect(try await storage.deadRevocations().map(\.id) == ["i1"])
            #expect(try await storage.dueRevocations(at: now.adding(.seconds(86_400)), leaseUntil: now.adding(.seconds(86_460)), limit: 10).isEmpty)
            // Kept for its retention, then forgotten with its token and accountId.
            #expect(try await storage.pruneDeadRevocations(givenUpBefore: now.adding(.seconds(10))) == 0)
            #expect(try await storage.pruneDeadRevocations(givenUpBefore: now.adding(.seconds(11))) == 1)
            #expect(try await storage.deadRevocations().isEmpty)
            try await storage.finishRevocation(id: "i1")
        }
    }
}
