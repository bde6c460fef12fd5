import Foundation
@testable import IdentityService
import KontoModel
import Testing

/// Mailed sign-in codes on every storage: single use, expiring, the account's alone, ended by a credential change.
@Suite("Identity storage: sign-in codes")
struct IdentityStorageEmailCodeTests {
    typealias Conformance = IdentityStorageConformanceTests

    @Test("a code signs in once, before it expires, only its own account, under the credential it was made for; using one ends the others and verifies the address once", arguments: IdentityStorageKind.allCases)
    func codes(kind: IdentityStorageKind) async throws {
        let t0 = Conformance.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Conformance.account(storage, "a2", "jane@stanford.edu", sessionByte: 2)
            let version = try #require(try await storage.credential(accountId: "a1")).credentialVersion
            let expiry = t0.adding(.seconds(600))
            try await storage.createEmailCode(accountId: "a1", codeDigest: Conformance.token(31), credentialVersion: version, expiresAt: expiry, events: [Conformance.event("a1", .passwordChanged)])
            #expect(try await storage.pendingEvents(limit: 10).last?.kind == .passwordChanged)
            try await storage.createEmailCode(accountId: "a1", codeDigest: Conformance.token(32), credentialVersion: version, expiresAt: expiry, events: [])
            // Not for a missing account, nor under a version the credential is not at.
            for (account, at) in [("missing", version), ("a1", version + 1)] {
                await #expect {
                    try await storage.createEmailCode(accountId: account, codeDigest: Conformance.token(33), credentialVersion: at, expiresAt: expiry, events: [])
                } throws: { error in
                    (error as? IdentityStorageError)?.code == .notFound
                }
            }
            let verifiedEvents: @Sendable (Bool) -> [AccountEvent] = { $0 ? [Conformance.event("a1", .emailVerified)] : [] }
            #expect(try await storage.useEmailCode(accountId: "a2", codeDigest: Conformance.token(31), at: t0, events: verifiedEvents) == nil, "another account's")
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(31), at: expiry, events: verifiedEvents) == nil, "expired")
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(34), at: t0, events: verifiedEvents) == nil, "unknown")
            #expect(try await storage.useEmailCode(accountId: "", codeDigest: Conformance.token(31), at: t0, events: verifiedEvents) == nil, "no account")
            #expect(try await storage.credential(accountId: "a1")?.emailVerifiedAt == nil, "a refused code verifies nothing")
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(31), at: t0.adding(.seconds(5)), events: verifiedEvents) == UsedEmailCode(credentialVersion: version, expiresAt: expiry))
            #expect(try await storage.credential(accountId: "a1")?.emailVerifiedAt == t0.adding(.seconds(5)))
            #expect(try await storage.pendingEvents(limit: 10).last?.kind == .emailVerified)
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(31), at: t0, events: verifiedEvents) == nil, "used")
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(32), at: t0, events: verifiedEvents) == nil, "ended by the other's use")

            // Verified already: the next code's use says so, and no event comes of it.
            try await storage.createEmailCode(accountId: "a1", codeDigest: Conformance.token(35), credentialVersion: version, expiresAt: expiry, events: [])
            let before = try await storage.pendingEvents(limit: 100).count
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(35), at: t0, events: verifiedEvents)?.credentialVersion == version)
            #expect(try await storage.pendingEvents(limit: 100).count == before)

            // A new password ends the codes made before it; so does the account's deletion.
            try await storage.createEmailCode(accountId: "a1", codeDigest: Conformance.token(36), credentialVersion: version, expiresAt: expiry, events: [])
            _ = try await storage.changePassword(accountId: "a1", passwordHash: "$argon2id$other", keeping: nil) { _ in [] }
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(36), at: t0, events: verifiedEvents) == nil)
            let changed = try #require(try await storage.credential(accountId: "a1")).credentialVersion
            try await storage.createEmailCode(accountId: "a1", codeDigest: Conformance.token(37), credentialVersion: changed, expiresAt: expiry, events: [])
            #expect(try await storage.deleteAccount(accountId: "a1", events: [], profileCleanupAt: t0))
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(37), at: t0, events: verifiedEvents) == nil)
        }
    }

    @Test("expired codes are pruned", arguments: IdentityStorageKind.allCases)
    func pruned(kind: IdentityStorageKind) async throws {
        let t0 = Conformance.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            let version = try #require(try await storage.credential(accountId: "a1")).credentialVersion
            try await storage.createEmailCode(accountId: "a1", codeDigest: Conformance.token(41), credentialVersion: version, expiresAt: t0.adding(.seconds(60)), events: [])
            try await storage.createEmailCode(accountId: "a1", codeDigest: Conformance.token(42), credentialVersion: version, expiresAt: t0.adding(.seconds(600)), events: [])
            _ = try await storage.pruneExpired(at: t0.adding(.seconds(61)), profileCleanupAt: t0, limit: 100) { _ in [] }
            // The pruned one is gone even for a clock that says it is still early; the other still works.
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(41), at: t0, events: { _ in [] }) == nil)
            #expect(try await storage.useEmailCode(accountId: "a1", codeDigest: Conformance.token(42), at: t0.adding(.seconds(61)), events: { _ in [] })?.credentialVersion == version)
        }
    }

    /// Many rounds of several tasks at once on the global executor's threads (and, on PostgreSQL, connections).
    @Test("under concurrency a code signs in exactly once", arguments: IdentityStorageKind.allCases)
    func once(kind: IdentityStorageKind) async throws {
        let t0 = Conformance.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            let version = try #require(try await storage.credential(accountId: "a1")).credentialVersion
            for round in 0..<20 {
                let digest = Conformance.token(UInt8(100 + round))
                try await storage.createEmailCode(accountId: "a1", codeDigest: digest, credentialVersion: version, expiresAt: t0.adding(.seconds(60)), events: [])
                let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<6 {
                        group.addTask { try await storage.useEmailCode(accountId: "a1", codeDigest: digest, at: t0) { _ in [] } != nil }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(wins == 1, "round \(round)")
            }
        }
    }
}
