import Foundation
@testable import IdentityService
import KontoModel
import Testing

/// Retention of Identity's records, on memory and PostgreSQL alike (issue 28, item 2): what has expired, and
/// anonymous accounts no one can sign in to any more, are deleted.
@Suite("Identity storage: retention")
struct IdentityStorageRetentionTests {
    typealias Conformance = IdentityStorageConformanceTests
    static let t0 = Conformance.t0

    @Test("expired sessions and reset tokens go; anonymous accounts without a session go with a deletion event and a profile clean-up", arguments: IdentityStorageKind.allCases)
    func pruneExpired(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let later = Self.t0.adding(.seconds(500))
            // Sessions idle out 600 s after they are made.
            try await Conformance.account(storage, "user", "user@stanford.edu", sessionByte: 1)
            try await storage.createSession(Conformance.session("s-fresh", account: "user", byte: 2, at: later), events: [])
            try await storage.createAnonymousAccount(
                Conformance.credential("anon-dead", nil), session: Conformance.session("s-anon-dead", account: "anon-dead", byte: 3), events: []
            )
            try await storage.createAnonymousAccount(
                Conformance.credential("anon-live", nil, at: later), session: Conformance.session("s-anon-live", account: "anon-live", byte: 4, at: later), events: []
            )
            try await storage.createResetToken(tokenHash: Conformance.token(10), accountId: "user", expiresAt: Self.t0.adding(.seconds(60)), events: [])
            try await storage.createResetToken(tokenHash: Conformance.token(11), accountId: "user", expiresAt: Self.t0.adding(.seconds(7_200)), events: [])
            let before = try await storage.pendingEvents(limit: 100).count

            let now = Self.t0.adding(.seconds(700))
            let pruned = try await storage.pruneExpired(at: now, profileCleanupAt: now, limit: 10) { accountId in
                [Conformance.event(accountId, .deletingAccount)]
            }
            #expect(pruned == PrunedRecords(sessions: 2, resetTokens: 1, anonymousAccounts: 1))
            #expect(try await storage.session(tokenHash: Conformance.token(1)) == nil)
            #expect(try await storage.session(tokenHash: Conformance.token(3)) == nil)
            #expect(try await storage.session(tokenHash: Conformance.token(2)) != nil)
            #expect(try await storage.session(tokenHash: Conformance.token(4)) != nil)
            #expect(try await storage.credential(accountId: "anon-dead") == nil)
            #expect(try await storage.credential(accountId: "anon-live") != nil)
            #expect(try await storage.credential(accountId: "user") != nil)
            // Gone, not just expired: asked at a time when it was still valid, it is not found.
            #expect(try await storage.resetTokenAccount(tokenHash: Conformance.token(10), at: Self.t0) == nil)
            #expect(try await storage.resetTokenAccount(tokenHash: Conformance.token(11), at: now) == "user")
            #expect(try await storage.dueProfileCleanups(at: now, limit: 10) == ["anon-dead"])
            let events = try await storage.pendingEvents(limit: 100).dropFirst(before)
            #expect(events.map(\.accountId) == ["anon-dead"])
            #expect(events.map(\.kind) == [.deletingAccount])

            #expect(try await storage.pruneExpired(at: now, profileCleanupAt: now, limit: 10) { _ in [] } == PrunedRecords())
        }
    }

    @Test("the limit bounds each pass", arguments: IdentityStorageKind.allCases)
    func limit(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "user", "user@stanford.edu", sessionByte: 1)
            for byte in UInt8(2)...4 {
                try await storage.createSession(Conformance.session("s\(byte)", account: "user", byte: byte), events: [])
            }
            let now = Self.t0.adding(.seconds(3_600))
            #expect(try await storage.pruneExpired(at: now, profileCleanupAt: now, limit: 3) { _ in [] }.sessions == 3)
            #expect(try await storage.pruneExpired(at: now, profileCleanupAt: now, limit: 3) { _ in [] }.sessions == 1)
        }
    }
}
