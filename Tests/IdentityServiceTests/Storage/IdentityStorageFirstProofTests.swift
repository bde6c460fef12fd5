import Foundation
@testable import IdentityService
import KontoModel
import PostgresNIO
import Testing

/// The account's first proof of its address (docs/IDENTITY.md, "Pre-hijacked accounts") on every storage: what the
/// account gained while unproven ends once, in one transaction, and never again.
@Suite("Identity storage: first proof of the address")
struct IdentityStorageFirstProofTests {
    typealias Conformance = IdentityStorageConformanceTests
    static let t0 = Conformance.t0

    /// An unproven account with a password, two sessions, a TOTP, recovery codes, a passkey and a linked identity
    /// holding a provider token: all a squatter could have set up.
    static func squatted(_ storage: any IdentityStorage, _ account: String, byte: UInt8) async throws {
        try await Conformance.account(storage, account, "\(account)@example.org", sessionByte: byte)
        try await storage.createSession(Conformance.session("s2-\(account)", account: account, byte: byte &+ 100), events: [])
        try await storage.addPendingFactor(StoredFactor(id: "t-\(account)", accountId: account, kind: .totp, name: "Authenticator app", sealedSecret: [1], confirmed: false, createdAt: t0))
        _ = try await storage.confirmFactor(accountId: account, factorId: "t-\(account)", step: 1, at: t0, events: [])
        try await storage.replaceRecoveryCodes(StoredFactor(id: "r-\(account)", accountId: account, kind: .recoveryCodes, name: "Recovery codes", confirmed: true, createdAt: t0), codeHashes: [Conformance.token(9)], events: [])
        _ = try await storage.addPasskey(IdentityStorageFactorTests.passkey("p-\(account)", account: account, credentialId: [byte, 1, 2, 3]), events: [])
        _ = try await storage.addExternalIdentity(IdentityStorageExternalIdentityTests.identity("i-\(account)", account: account, subject: "sub-\(account)", sealed: [5, 5]), events: [])
    }

    @Test("the first proof ends sessions but the kept one, the password, every factor and identity (their token revoked), with its events; a second proof ends nothing", arguments: IdentityStorageKind.allCases)
    func endsOnce(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.squatted(storage, "a1", byte: 1)
            let before = try #require(try await storage.credential(accountId: "a1"))
            let proof = Self.t0.adding(.seconds(60))
            let ended = try await storage.endAccessBeforeFirstProof(accountId: "a1", keeping: "s-a1", keepingPassword: false, at: proof) { ended in
                [Conformance.event("a1", .factorRemoved(factorId: "all", factorType: "\(ended.factors.count)", remaining: 0))]
            }
            #expect(ended == AccessEnded(
                sessions: 1, passwordRemoved: true,
                factors: [("p-a1", .passkey), ("r-a1", .recoveryCodes), ("t-a1", .totp)], identities: [("i-a1", "test")]
            ))
            #expect(try await storage.pendingEvents(limit: 20).last?.kind == .factorRemoved(factorId: "all", factorType: "3", remaining: 0))
            let after = try #require(try await storage.credential(accountId: "a1"))
            #expect(after.passwordHash == nil && after.credentialVersion == before.credentialVersion + 1)
            // The kept session is valid under the new version; the other is gone.
            #expect(try await storage.session(tokenHash: Conformance.token(1))?.credentialVersion == after.credentialVersion)
            #expect(try await storage.session(tokenHash: Conformance.token(101)) == nil)
            #expect(try await storage.factors(accountId: "a1").isEmpty)
            #expect(try await storage.passkey(credentialId: [1, 1, 2, 3]) == nil)
            #expect(try await storage.externalIdentities(accountId: "a1").isEmpty)
            let due = try await storage.dueRevocations(at: proof.adding(.seconds(3_600)), leaseUntil: proof.adding(.seconds(3_660)), limit: 10)
            #expect(due.map(\.identityId) == ["i-a1"] && due.first?.sealedToken == [5, 5])
            // Proven now: nothing more ends, whatever comes later.
            try await storage.createSession(Conformance.session("s3-a1", account: "a1", byte: 33, version: after.credentialVersion), events: [])
            #expect(try await storage.endAccessBeforeFirstProof(accountId: "a1", keeping: nil, keepingPassword: false, at: proof.adding(.seconds(60))) { _ in [] } == nil)
            #expect(try await storage.session(tokenHash: Conformance.token(33)) != nil)
            // Keeping the password (a reset set it) keeps it.
            try await Self.squatted(storage, "a2", byte: 2)
            let kept = try await storage.endAccessBeforeFirstProof(accountId: "a2", keeping: nil, keepingPassword: true, at: proof) { _ in [] }
            #expect(kept?.passwordRemoved == false && kept?.sessions == 2)
            #expect(try await storage.credential(accountId: "a2")?.passwordHash != nil)
            // An unknown account: nothing.
            #expect(try await storage.endAccessBeforeFirstProof(accountId: "missing", keeping: nil, keepingPassword: false, at: proof) { _ in [] } == nil)
        }
    }

    @Test("the first proof ends the applications the squatter let in (consents, grants, codes) and turns the mail it silenced on again", arguments: IdentityStorageKind.allCases)
    func applicationsAndMail(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.squatted(storage, "a3", byte: 3)
            try await storage.saveOpenIDConsent(StoredOpenIDConsent(accountId: "a3", clientId: "crm", scopes: ["openid", "offline_access"], grantedAt: Self.t0), audit: [])
            try await storage.createAuthorizationCode(StoredAuthorizationCode(
                codeHash: Conformance.token(77), accountId: "a3", sessionId: "s-a3", clientId: "study", redirectURI: "https://study.example.org/cb",
                codeChallenge: String(repeating: "c", count: 43), scopes: ["openid"], nonce: nil, authTime: Self.t0, assuranceLevel: 1, signInMethod: "pwd",
                credentialVersion: 1, issuedAt: Self.t0, expiresAt: Self.t0.adding(.seconds(60)), keepUntil: Self.t0.adding(.seconds(600))
            ))
            #expect(try await storage.setMailOptOuts(accountId: "a3", ["newSignIn"], audit: []))
            let ended = try #require(try await storage.endAccessBeforeFirstProof(accountId: "a3", keeping: nil, keepingPassword: false, at: Self.t0.adding(.seconds(60))) { _ in [] })
            #expect(ended.applications == ["crm", "study"] && ended.mailPreferencesRestored)
            #expect(try await storage.openIDConsents(accountId: "a3").isEmpty)
            #expect(try await storage.mailOptOuts(accountId: "a3") == [])
        }
    }

    @Test("every table of Identity's schema is either ended by the first proof or kept on purpose, with a reason; after a squatted account's proof, no ended table holds a row of it")
    func everyTableDecided() async throws {
        try await IdentityStorageKind.postgres.withStorage { storage in
            let postgres = try #require(storage as? PostgresIdentityStorage)
            @Sendable func strings(_ sql: String) async throws -> [String] {
                try await postgres.run { client, logger in
                    try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(String.self).all()
                }
            }
            try await Self.squatted(storage, "a4", byte: 4)
            try await storage.saveOpenIDConsent(StoredOpenIDConsent(accountId: "a4", clientId: "crm", scopes: ["openid"], grantedAt: Self.t0), audit: [])
            _ = try await storage.endAccessBeforeFirstProof(accountId: "a4", keeping: nil, keepingPassword: false, at: Self.t0.adding(.seconds(60))) { _ in [] }
            let tables = Set(try await strings(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'identity' AND table_type = 'BASE TABLE' AND table_name NOT LIKE '%migrations%'"
            ))
            let ends = PostgresIdentityStorage.firstProofEnds, keeps = Set(PostgresIdentityStorage.firstProofKeeps.keys)
            #expect(ends.isDisjoint(with: keeps))
            #expect(tables.subtracting(ends).subtracting(keeps).isEmpty, "undecided: \(tables.subtracting(ends).subtracting(keeps).sorted()): end them at the first proof (PostgresIdentityStorage+FirstProof) or say why they are kept")
            #expect(ends.union(keeps).subtracting(tables).isEmpty, "listed but not in the schema: \(ends.union(keeps).subtracting(tables).sorted())")
            for table in ends.sorted() {
                let columns = try await strings("SELECT column_name::text FROM information_schema.columns WHERE table_schema = 'identity' AND table_name = '\(table)'")
                guard columns.contains("account_id") else { continue }
                let left = try await strings("SELECT count(*)::text FROM identity.\(table) WHERE account_id = 'a4'")
                #expect(left == ["0"], "\(table) still holds rows of the account")
            }
        }
    }

    @Test("an address verified when the account was made (a provider vouched) was proven from the start, also after a change of userId", arguments: IdentityStorageKind.allCases)
    func provenFromTheStart(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            var credential = Conformance.credential("v1", "vouched@example.org")
            credential.emailVerifiedAt = Self.t0
            try await storage.reserveAccount(credential)
            try await storage.activateAccount(accountId: "v1", session: Conformance.session("s-v1", account: "v1", byte: 41), events: [])
            #expect(try await storage.endAccessBeforeFirstProof(accountId: "v1", keeping: nil, keepingPassword: false, at: Self.t0.adding(.seconds(5))) { _ in [] } == nil)
            _ = try await storage.changeUserId(accountId: "v1", userId: "renamed@example.org", normalizedUserId: "renamed@example.org", keeping: nil) { _ in [] }
            #expect(try await storage.endAccessBeforeFirstProof(accountId: "v1", keeping: nil, keepingPassword: false, at: Self.t0.adding(.seconds(9))) { _ in [] } == nil)
            #expect(try await storage.credential(accountId: "v1")?.passwordHash != nil)
            // An unproven account that changes its userId stays unproven: the new address's owner ends what came before.
            try await Self.squatted(storage, "u1", byte: 51)
            _ = try await storage.changeUserId(accountId: "u1", userId: "other@example.org", normalizedUserId: "other@example.org", keeping: nil) { _ in [] }
            #expect(try await storage.endAccessBeforeFirstProof(accountId: "u1", keeping: nil, keepingPassword: false, at: Self.t0.adding(.seconds(9))) { _ in [] }?.passwordRemoved == true)
        }
    }

    @Test("the owner's proof (made with a session of the account) records the account as proven and ends nothing: every session stays valid, the password, factors and identities stay, no later proof ends them; a vouched or unknown account records nothing", arguments: IdentityStorageKind.allCases)
    func ownersProof(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.squatted(storage, "o1", byte: 71)
            let before = try #require(try await storage.credential(accountId: "o1"))
            let events = try await storage.pendingEvents(limit: 100).count
            #expect(try await storage.recordOwnersProof(accountId: "o1", at: Self.t0.adding(.seconds(60))))
            let after = try #require(try await storage.credential(accountId: "o1"))
            #expect(after.passwordHash != nil && after.credentialVersion == before.credentialVersion)
            #expect(try await storage.session(tokenHash: Conformance.token(71)) != nil)
            #expect(try await storage.session(tokenHash: Conformance.token(171)) != nil)
            #expect(try await storage.factors(accountId: "o1").count == 3)
            #expect(try await storage.externalIdentities(accountId: "o1").count == 1)
            #expect(try await storage.pendingEvents(limit: 100).count == events, "the owner's proof writes no event of its own")
            // Proven: neither a second owner's proof nor a proof without a session is the first any more.
            #expect(try await storage.recordOwnersProof(accountId: "o1", at: Self.t0.adding(.seconds(61))) == false)
            #expect(try await storage.endAccessBeforeFirstProof(accountId: "o1", keeping: nil, keepingPassword: false, at: Self.t0.adding(.seconds(62))) { _ in [] } == nil)
            #expect(try await storage.factors(accountId: "o1").count == 3)
            // An account whose address a provider vouched for was proven from the start; an unknown one is nothing.
            var vouched = Conformance.credential("o2", "vouched-owner@example.org")
            vouched.emailVerifiedAt = Self.t0
            try await storage.reserveAccount(vouched)
            try await storage.activateAccount(accountId: "o2", session: Conformance.session("s-o2", account: "o2", byte: 72), events: [])
            #expect(try await storage.recordOwnersProof(accountId: "o2", at: Self.t0.adding(.seconds(5))) == false)
            #expect(try await storage.recordOwnersProof(accountId: "missing", at: Self.t0.adding(.seconds(5))) == false)
        }
    }

    @Test("an owner's proof racing proofs without a session over 20 rounds: exactly one is the first, and the account ends as that one left it", arguments: IdentityStorageKind.allCases)
    func ownersProofRacing(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            for round in 0..<20 {
                let account = "owner-race-\(round)"
                try await Self.squatted(storage, account, byte: UInt8(round * 3 + 140))
                let outcomes = try await withThrowingTaskGroup(of: (owner: Bool, first: Bool).self) { group in
                    for index in 0..<6 {
                        group.addTask {
                            if index % 2 == 0 {
                                return (true, try await storage.recordOwnersProof(accountId: account, at: Self.t0.adding(.seconds(60))))
                            }
                            let ended = try await storage.endAccessBeforeFirstProof(accountId: account, keeping: nil, keepingPassword: false, at: Self.t0.adding(.seconds(60))) { _ in [] }
                            return (false, ended != nil)
                        }
                    }
                    return try await group.reduce(into: [(owner: Bool, first: Bool)]()) { $0.append($1) }
                }
                let firsts = outcomes.filter(\.first)
                #expect(firsts.count == 1, "round \(round)")
                let factors = try await storage.factors(accountId: account).count
                #expect(factors == (firsts.first?.owner == true ? 3 : 0), "round \(round): \(factors) factors after \(firsts)")
            }
        }
    }

    @Test("six proofs racing over 20 rounds: exactly one is the first", arguments: IdentityStorageKind.allCases)
    func racingProofs(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            for round in 0..<20 {
                let account = "race-\(round)"
                try await Self.squatted(storage, account, byte: UInt8(round * 3 + 60))
                let outcomes = try await withThrowingTaskGroup(of: AccessEnded?.self) { group in
                    for _ in 0..<6 {
                        group.addTask {
                            try await storage.endAccessBeforeFirstProof(accountId: account, keeping: nil, keepingPassword: false, at: Self.t0.adding(.seconds(60))) { _ in [] }
                        }
                    }
                    return try await group.reduce(into: [AccessEnded?]()) { $0.append($1) }
                }
                #expect(outcomes.compactMap { $0 }.count == 1, "round \(round)")
                #expect(outcomes.compactMap { $0 }.first?.factors.count == 3)
            }
        }
    }
}
