import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import Testing

/// Email verification tokens on every storage: single use, expiring, bound to the address they were sent to.
@Suite("Identity storage: email verification")
struct IdentityStorageEmailVerificationTests {
    typealias Conformance = IdentityStorageConformanceTests

    @Test("a token verifies its address once and before it expires, never another account's or a former address; the address goes unverified with a new userId; a deletion takes the tokens", arguments: IdentityStorageKind.allCases)
    func tokens(kind: IdentityStorageKind) async throws {
        let t0 = Conformance.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            let token = Conformance.token(21)
            try await storage.createEmailVerification(tokenHash: token, accountId: "a1", address: "leland@stanford.edu", expiresAt: t0.adding(.seconds(60)), events: [Conformance.event("a1", .passwordChanged)])
            #expect(try await storage.pendingEvents(limit: 10).last?.kind == .passwordChanged)
            // Not for an address the account does not have, nor for a missing account.
            for (account, address) in [("a1", "someone@stanford.edu"), ("missing", "leland@stanford.edu")] {
                await #expect {
                    try await storage.createEmailVerification(tokenHash: Conformance.token(22), accountId: account, address: address, expiresAt: t0.adding(.seconds(60)), events: [])
                } throws: { error in
                    (error as? IdentityStorageError)?.code == .notFound
                }
            }
            #expect(try await storage.confirmEmailVerification(tokenHash: token, accountId: nil, at: t0.adding(.seconds(60))) { _ in [] } == nil, "expired")
            // Bound to another account (the confirmer's session is another's): refused, and the token is left for its own.
            try await storage.createEmailVerification(tokenHash: Conformance.token(25), accountId: "a1", address: "leland@stanford.edu", expiresAt: t0.adding(.seconds(60)), events: [])
            #expect(try await storage.confirmEmailVerification(tokenHash: Conformance.token(25), accountId: "a2", at: t0) { _ in [] } == nil, "another account's")
            #expect(try await storage.credential(accountId: "a1")?.emailVerifiedAt == nil)
            #expect(try await storage.confirmEmailVerification(tokenHash: Conformance.token(25), accountId: "a1", at: t0.adding(.seconds(5))) { _ in [] } == "a1", "its own account's")
            #expect(try await storage.credential(accountId: "a1")?.emailVerifiedAt == t0.adding(.seconds(5)))
            try await storage.createEmailVerification(tokenHash: token, accountId: "a1", address: "leland@stanford.edu", expiresAt: t0.adding(.seconds(60)), events: [])
            #expect(try await storage.confirmEmailVerification(tokenHash: token, accountId: nil, at: t0.adding(.seconds(10))) { [Conformance.event($0, .emailVerified)] } == "a1")
            #expect(try await storage.credential(accountId: "a1")?.emailVerifiedAt == t0.adding(.seconds(10)))
            #expect(try await storage.pendingEvents(limit: 10).last?.kind == .emailVerified)
            #expect(try await storage.confirmEmailVerification(tokenHash: token, accountId: nil, at: t0) { _ in [] } == nil, "used")
            #expect(try await storage.confirmEmailVerification(tokenHash: Conformance.token(23), accountId: nil, at: t0) { _ in [] } == nil, "unknown")

            // A token for the address, then a new userId: the address is unverified and the token verifies nothing.
            try await storage.createEmailVerification(tokenHash: Conformance.token(24), accountId: "a1", address: "leland@stanford.edu", expiresAt: t0.adding(.seconds(60)), events: [])
            _ = try await storage.changeUserId(accountId: "a1", userId: "lee@stanford.edu", normalizedUserId: "lee@stanford.edu", keeping: nil) { _ in [] }
            #expect(try await storage.credential(accountId: "a1")?.emailVerifiedAt == nil)
            #expect(try await storage.confirmEmailVerification(tokenHash: Conformance.token(24), accountId: nil, at: t0) { _ in [] } == nil)

            try await storage.createEmailVerification(tokenHash: Conformance.token(25), accountId: "a1", address: "lee@stanford.edu", expiresAt: t0.adding(.seconds(60)), events: [])
            #expect(try await storage.deleteAccount(accountId: "a1", events: [], profileCleanupAt: t0))
            #expect(try await storage.confirmEmailVerification(tokenHash: Conformance.token(25), accountId: nil, at: t0) { _ in [] } == nil)
        }
    }

    @Test("the owner's export: the links not used yet, soonest to expire first, never an expired one nor another account's; an audit entry lands only while the account exists", arguments: IdentityStorageKind.allCases)
    func forTheExport(kind: IdentityStorageKind) async throws {
        let t0 = Conformance.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Conformance.account(storage, "a2", "jane@stanford.edu", sessionByte: 2)
            try await storage.createEmailVerification(tokenHash: Conformance.token(41), accountId: "a1", address: "leland@stanford.edu", expiresAt: t0.adding(.seconds(600)), events: [])
            try await storage.createEmailVerification(tokenHash: Conformance.token(42), accountId: "a1", address: "Leland@Stanford.edu", isUserId: false, expiresAt: t0.adding(.seconds(60)), events: [])
            try await storage.createEmailVerification(tokenHash: Conformance.token(43), accountId: "a1", address: "old@stanford.edu", isUserId: false, expiresAt: t0.adding(.seconds(5)), events: [])
            try await storage.createEmailVerification(tokenHash: Conformance.token(44), accountId: "a2", address: "jane@stanford.edu", expiresAt: t0.adding(.seconds(60)), events: [])
            let pending = try await storage.pendingEmailVerifications(accountId: "a1", at: t0.adding(.seconds(10)))
            #expect(pending.map(\.address) == ["Leland@Stanford.edu", "leland@stanford.edu"])
            #expect(pending.map(\.expiresAt) == [t0.adding(.seconds(60)), t0.adding(.seconds(600))])
            #expect(try await storage.pendingEmailVerifications(accountId: "missing", at: t0).isEmpty)

            let entry = AuditRecord(occurredAt: t0, accountId: "a1", actorType: .account, actorId: "a1", type: "account.exported", operation: "exportAccount", facts: [:], personal: ["clientAddress": "192.0.2.1"])
            #expect(try await storage.appendAudit([entry], whileAccountExists: "a1"))
            #expect(try await storage.auditEntries(AuditQuery(accountId: "a1", type: "account.exported", limit: 10)).count == 1)
            #expect(try await storage.deleteAccount(accountId: "a1", events: [], profileCleanupAt: t0))
            #expect(try await storage.appendAudit([entry], whileAccountExists: "a1") == false)
            #expect(try await storage.auditEntries(AuditQuery(accountId: "a1", type: "account.exported", limit: 10)).count == 1)
            #expect(try await storage.pendingEmailVerifications(accountId: "a1", at: t0).isEmpty)
        }
    }

    @Test("a token for a contact address (usernames' email detail) records the address it verified, whatever the userId; the lookups carry it", arguments: IdentityStorageKind.allCases)
    func contactAddress(kind: IdentityStorageKind) async throws {
        let t0 = Conformance.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland", sessionByte: 1)
            try await storage.createEmailVerification(tokenHash: Conformance.token(31), accountId: "a1", address: "Leland@Stanford.edu", isUserId: false, expiresAt: t0.adding(.seconds(60)), events: [])
            await #expect {
                try await storage.createEmailVerification(tokenHash: Conformance.token(32), accountId: "missing", address: "x@stanford.edu", isUserId: false, expiresAt: t0.adding(.seconds(60)), events: [])
            } throws: { error in
                (error as? IdentityStorageError)?.code == .notFound
            }
            #expect(try await storage.confirmEmailVerification(tokenHash: Conformance.token(31), accountId: nil, at: t0) { [Conformance.event($0, .emailVerified)] } == "a1")
            let credential = try await storage.credential(accountId: "a1")
            #expect(credential?.verifiedEmail == "Leland@Stanford.edu" && credential?.emailVerifiedAt == nil)
            #expect(try await storage.credential(normalizedUserId: "leland")?.verifiedEmail == "Leland@Stanford.edu")
            #expect(try await storage.loginLookup(normalizedUserId: "leland", keys: [], at: t0, window: .seconds(60)).credential?.verifiedEmail == "Leland@Stanford.edu")
            #expect(try await storage.session(tokenHash: Conformance.token(1))?.account?.verifiedEmail == "Leland@Stanford.edu")
            #expect(try await storage.confirmEmailVerification(tokenHash: Conformance.token(31), accountId: nil, at: t0) { _ in [] } == nil, "used")
        }
    }

    /// Many rounds of several tasks at once on the global executor's threads (and, on PostgreSQL, connections).
    @Test("under concurrency a token verifies exactly once", arguments: IdentityStorageKind.allCases)
    func once(kind: IdentityStorageKind) async throws {
        let t0 = Conformance.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            for round in 0..<20 {
                let token = Conformance.token(UInt8(100 + round))
                try await storage.createEmailVerification(tokenHash: token, accountId: "a1", address: "leland@stanford.edu", expiresAt: t0.adding(.seconds(60)), events: [])
                let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<6 {
                        group.addTask { try await storage.confirmEmailVerification(tokenHash: token, accountId: nil, at: t0) { [Conformance.event($0, .emailVerified)] } != nil }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(wins == 1, "round \(round)")
            }
            #expect(try await storage.pendingEvents(limit: 100).filter { $0.kind == .emailVerified }.count == 20)
        }
    }
}
