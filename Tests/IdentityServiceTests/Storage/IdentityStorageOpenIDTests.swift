import Foundation
@testable import IdentityService
import KontoContracts
import KontoModel
import Testing

/// The OpenID Provider's records on every storage: codes once only (a second use revokes what the first gave),
/// refresh tokens rotated once only (a reuse revokes the family), grants ended by credential changes, disabling,
/// deletion, logout through the provider and the owner's revocation, consents, retention.
@Suite("Identity storage: OpenID Provider")
struct IdentityStorageOpenIDTests {
    typealias Conformance = IdentityStorageConformanceTests
    static let t0 = Conformance.t0

    static func code(_ byte: UInt8, account: String = "a1", session: String = "s-a1", client: String = "app", version: Int64 = 1) -> StoredAuthorizationCode {
        StoredAuthorizationCode(
            codeHash: Conformance.token(byte), accountId: account, sessionId: session, clientId: client, redirectURI: "https://app.example/cb",
            codeChallenge: String(repeating: "c", count: 43), scopes: ["openid", "email", "offline_access"], nonce: "n-\(byte)",
            authTime: t0, assuranceLevel: 2, signInMethod: "password", credentialVersion: version,
            issuedAt: t0, expiresAt: t0.adding(.seconds(60)), keepUntil: t0.adding(.seconds(600))
        )
    }

    /// The grant an exchange of `code` makes, with a first refresh token `refreshByte` (none when nil).
    static func grant(_ id: String, from code: StoredAuthorizationCode, refreshByte: UInt8?) -> NewOpenIDGrant {
        NewOpenIDGrant(
            grant: StoredOpenIDGrant(
                id: id, accountId: code.accountId, clientId: code.clientId, sessionId: code.sessionId, scopes: code.scopes, authTime: code.authTime,
                assuranceLevel: code.assuranceLevel, signInMethod: code.signInMethod, credentialVersion: code.credentialVersion, createdAt: t0,
                idleExpiresAt: t0.adding(.seconds(3_600)), absoluteExpiresAt: t0.adding(.seconds(86_400))
            ),
            refreshToken: refreshByte.map { StoredRefreshToken(tokenHash: Conformance.token($0), expiresAt: t0.adding(.seconds(3_600))) }
        )
    }

    static func audit(_ accountId: String, _ type: String) -> [AuditRecord] {
        [AuditRecord(occurredAt: t0, accountId: accountId, actorType: .account, actorId: accountId, type: type, operation: nil)]
    }

    /// Stores a code and redeems it into grant `id`; the grant.
    @discardableResult
    static func granted(_ storage: any IdentityStorage, _ id: String, codeByte: UInt8, refreshByte: UInt8?, account: String = "a1", client: String = "app") async throws -> StoredOpenIDGrant {
        let code = code(codeByte, account: account, session: "s-\(account)", client: client)
        try await storage.createAuthorizationCode(code)
        let redemption = try await storage.redeemAuthorizationCode(codeHash: code.codeHash, at: t0) { grant(id, from: $0, refreshByte: refreshByte) }
        guard case .redeemed(_, let grant) = redemption else {
            Issue.record("not redeemed: \(redemption)")
            throw CancellationError()
        }
        return grant
    }

    static func expectNotFound(_ body: () async throws -> Void, _ comment: Comment) async {
        await #expect(throws: IdentityStorageError.self, comment) { try await body() }
        do { try await body() } catch { #expect((error as? IdentityStorageError)?.code == .notFound, comment) }
    }

    @Test("a code is stored only for a live session of its account at its credential version", arguments: IdentityStorageKind.allCases)
    func codeCreation(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Conformance.account(storage, "a2", "jane@stanford.edu", sessionByte: 2)
            await Self.expectNotFound({ try await storage.createAuthorizationCode(Self.code(10, session: "missing")) }, "no such session")
            await Self.expectNotFound({ try await storage.createAuthorizationCode(Self.code(11, session: "s-a2")) }, "another account's session")
            await Self.expectNotFound({ try await storage.createAuthorizationCode(Self.code(12, version: 2)) }, "another credential version")
            await Self.expectNotFound({ try await storage.createAuthorizationCode(Self.code(13, account: "missing")) }, "no such account")
            try await storage.createAuthorizationCode(Self.code(14))
            #expect(try await storage.redeemAuthorizationCode(codeHash: Conformance.token(10), at: Self.t0) { _ in nil } == .unknown, "never stored")
        }
    }

    @Test("a code is redeemed once, before it expires, while its session and credential last; a second use revokes the grant the first made", arguments: IdentityStorageKind.allCases)
    func codeRedemption(kind: IdentityStorageKind) async throws {
        let t0 = Self.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            let first = Self.code(20)
            try await storage.createAuthorizationCode(first)
            let redeemed = try await storage.redeemAuthorizationCode(codeHash: first.codeHash, at: t0.adding(.seconds(5))) { code in
                Self.grant("g1", from: code, refreshByte: 21)
            }
            #expect(redeemed == .redeemed(first, Self.grant("g1", from: first, refreshByte: 21).grant))
            #expect(try await storage.openIDGrant(id: "g1", at: t0)?.scopes == first.scopes)
            // The second use: refused, and the grant the first made (its refresh token with it) ends.
            #expect(try await storage.redeemAuthorizationCode(codeHash: first.codeHash, at: t0.adding(.seconds(6))) { _ in
                Issue.record("a used code reached the exchange")
                return nil
            } == .reused(accountId: "a1", clientId: "app", revokedGrant: true))
            #expect(try await storage.openIDGrant(id: "g1", at: t0) == nil)
            #expect(try await storage.rotateRefreshToken(tokenHash: Conformance.token(21), at: t0, replacement: StoredRefreshToken(tokenHash: Conformance.token(22), expiresAt: t0.adding(.seconds(60)))) { _ in true } == .unknown)
            #expect(try await storage.redeemAuthorizationCode(codeHash: first.codeHash, at: t0.adding(.seconds(7))) { _ in nil } == .reused(accountId: "a1", clientId: "app", revokedGrant: false))

            // Refused by the exchange's checks: used up all the same, no grant.
            let refused = Self.code(23)
            try await storage.createAuthorizationCode(refused)
            #expect(try await storage.redeemAuthorizationCode(codeHash: refused.codeHash, at: t0) { _ in nil } == .refused(refused))
            #expect(try await storage.redeemAuthorizationCode(codeHash: refused.codeHash, at: t0) { _ in Self.grant("g2", from: refused, refreshByte: nil) }
                == .reused(accountId: "a1", clientId: "app", revokedGrant: false))
            #expect(try await storage.openIDGrant(id: "g2", at: t0) == nil)

            // Expired.
            let late = Self.code(24)
            try await storage.createAuthorizationCode(late)
            #expect(try await storage.redeemAuthorizationCode(codeHash: late.codeHash, at: late.expiresAt) { Self.grant("g3", from: $0, refreshByte: nil) } == .unknown)

            // Its session ended (a logout) before the exchange.
            let loggedOut = Self.code(25)
            try await storage.createAuthorizationCode(loggedOut)
            #expect(try await storage.deleteSession(id: "s-a1", events: []))
            #expect(try await storage.redeemAuthorizationCode(codeHash: loggedOut.codeHash, at: t0) { Self.grant("g4", from: $0, refreshByte: nil) } == .unknown)
            #expect(try await storage.openIDGrant(id: "g4", at: t0) == nil)

            // The password changed between the code and the exchange.
            try await storage.createSession(Conformance.session("s-a1", account: "a1", byte: 1), events: [])
            let beforeChange = Self.code(26)
            try await storage.createAuthorizationCode(beforeChange)
            _ = try await storage.changePassword(accountId: "a1", passwordHash: "$argon2id$other", keeping: "s-a1") { _ in [] }
            #expect(try await storage.redeemAuthorizationCode(codeHash: beforeChange.codeHash, at: t0) { Self.grant("g5", from: $0, refreshByte: nil) } == .unknown)
        }
    }

    @Test("a refresh token is exchanged once by its own client while its grant lives; reusing a rotated one revokes the family", arguments: IdentityStorageKind.allCases)
    func refresh(kind: IdentityStorageKind) async throws {
        let t0 = Self.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Self.granted(storage, "g1", codeByte: 30, refreshByte: 31)
            let next = StoredRefreshToken(tokenHash: Conformance.token(32), expiresAt: t0.adding(.seconds(7_200)))
            // Another client presents it: refused, nothing changes.
            #expect(try await storage.rotateRefreshToken(tokenHash: Conformance.token(31), at: t0, replacement: next) { $0.clientId == "other" } == .refused)
            #expect(try await storage.rotateRefreshToken(tokenHash: Conformance.token(99), at: t0, replacement: next) { _ in true } == .unknown)
            #expect(try await storage.rotateRefreshToken(tokenHash: Conformance.token(31), at: t0.adding(.seconds(3_600)), replacement: next) { _ in true } == .unknown, "expired")
            let rotation = try await storage.rotateRefreshToken(tokenHash: Conformance.token(31), at: t0.adding(.seconds(10)), replacement: next) { $0.clientId == "app" }
            guard case .rotated(let rotated) = rotation else {
                Issue.record("not rotated: \(rotation)")
                return
            }
            #expect(rotated.idleExpiresAt == next.expiresAt && rotated.lastRefreshedAt == t0.adding(.seconds(10)))
            #expect(try await storage.openIDGrant(id: "g1", at: t0) == rotated)
            #expect(try await storage.openIDGrant(id: "g1", at: t0.adding(.seconds(3_700))) == rotated, "alive past the first token's expiry")
            // Revocation finds the grant by either token, for its own client only.
            #expect(try await storage.openIDGrant(refreshTokenHash: Conformance.token(31), clientId: "app")?.id == "g1")
            #expect(try await storage.openIDGrant(refreshTokenHash: Conformance.token(32), clientId: "app")?.id == "g1")
            #expect(try await storage.openIDGrant(refreshTokenHash: Conformance.token(32), clientId: "other") == nil)
            // The rotated-out token again: the whole family ends, the current token with it.
            let third = StoredRefreshToken(tokenHash: Conformance.token(33), expiresAt: t0.adding(.seconds(7_200)))
            #expect(try await storage.rotateRefreshToken(tokenHash: Conformance.token(31), at: t0.adding(.seconds(20)), replacement: third) { _ in true } == .reused(rotated))
            #expect(try await storage.openIDGrant(id: "g1", at: t0) == nil)
            #expect(try await storage.rotateRefreshToken(tokenHash: Conformance.token(32), at: t0.adding(.seconds(20)), replacement: third) { _ in true } == .unknown)
            #expect(try await storage.openIDGrant(refreshTokenHash: Conformance.token(32), clientId: "app") == nil)
        }
    }

    @Test("grants end with a credential change, a disabling and the account, not with the session they came through", arguments: IdentityStorageKind.allCases)
    func grantLifetime(kind: IdentityStorageKind) async throws {
        let t0 = Self.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Conformance.account(storage, "a2", "jane@stanford.edu", sessionByte: 2)
            try await Conformance.account(storage, "a3", "ada@stanford.edu", sessionByte: 3)
            try await Self.granted(storage, "g1", codeByte: 40, refreshByte: 41)
            try await Self.granted(storage, "g2", codeByte: 42, refreshByte: 43, account: "a2")
            try await Self.granted(storage, "g3", codeByte: 44, refreshByte: nil, account: "a3")
            // A logout of the console leaves the grant, forgetting the session.
            #expect(try await storage.deleteSession(id: "s-a1", events: []))
            #expect(try await storage.openIDGrant(id: "g1", at: t0)?.sessionId == nil)
            #expect(try await storage.openIDGrants(accountId: "a1", at: t0).map(\.id) == ["g1"])
            #expect(try await storage.openIDGrants(accountId: "a1", at: t0.adding(.seconds(3_600))).isEmpty, "idle-expired")
            // A new password ends it.
            _ = try await storage.changePassword(accountId: "a1", passwordHash: "$argon2id$other", keeping: nil) { _ in [] }
            #expect(try await storage.openIDGrant(id: "g1", at: t0) == nil)
            #expect(try await storage.openIDGrants(accountId: "a1", at: t0).isEmpty)
            let next = StoredRefreshToken(tokenHash: Conformance.token(45), expiresAt: t0.adding(.seconds(7_200)))
            #expect(try await storage.rotateRefreshToken(tokenHash: Conformance.token(41), at: t0, replacement: next) { _ in true } == .unknown)
            // A disabling ends it, and enabling again does not bring it back.
            #expect(try await storage.setAccountDisabled(accountId: "a2", disabled: true, at: t0, events: []) != .notFound)
            #expect(try await storage.openIDGrant(id: "g2", at: t0) == nil)
            #expect(try await storage.setAccountDisabled(accountId: "a2", disabled: false, at: t0, events: []) != .notFound)
            #expect(try await storage.openIDGrant(id: "g2", at: t0) == nil)
            // The account's deletion ends it.
            #expect(try await storage.openIDGrant(id: "g3", at: t0) != nil)
            #expect(try await storage.deleteAccount(accountId: "a3", events: [], profileCleanupAt: t0))
            #expect(try await storage.openIDGrant(id: "g3", at: t0) == nil)
            #expect(try await storage.openIDGrants(accountId: "a3", at: t0).isEmpty)
        }
    }

    @Test("a client revokes only its own grant; logout through the provider ends its session and the grants made through it", arguments: IdentityStorageKind.allCases)
    func revocationAndLogout(kind: IdentityStorageKind) async throws {
        let t0 = Self.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Conformance.account(storage, "a2", "jane@stanford.edu", sessionByte: 2)
            try await Self.granted(storage, "g1", codeByte: 50, refreshByte: 51)
            try await Self.granted(storage, "g2", codeByte: 52, refreshByte: 53, client: "dashboard")
            try await Self.granted(storage, "g3", codeByte: 54, refreshByte: 55, account: "a2")
            #expect(try await storage.revokeOpenIDGrant(id: "g1", clientId: "dashboard", audit: Self.audit("a1", "test.wrong")) == false)
            #expect(try await storage.openIDGrant(id: "g1", at: t0) != nil)
            #expect(try await storage.revokeOpenIDGrant(id: "g1", clientId: "app", audit: Self.audit("a1", "test.revoked")))
            #expect(try await storage.openIDGrant(id: "g1", at: t0) == nil)
            #expect(try await storage.revokeOpenIDGrant(id: "g1", clientId: "app", audit: []) == false)
            let audited = try await storage.auditEntries(AuditQuery(accountId: "a1", limit: 50)).map(\.record.type)
            #expect(audited.contains("test.revoked") && !audited.contains("test.wrong"))

            // Another account's session: nothing.
            #expect(try await storage.endSessionAndGrants(sessionId: "s-a2", accountId: "a1", events: [], audit: { _ in Self.audit("a1", "test.wrong") }) == nil)
            try await storage.createSession(Conformance.session("s-other", account: "a1", byte: 56), events: [])
            let ended = try await storage.endSessionAndGrants(sessionId: "s-a1", accountId: "a1", events: [Conformance.event("a1", .disassociatingAccount)]) { count in
                Self.audit("a1", "test.logout.\(count)")
            }
            #expect(ended == 1)
            #expect(try await storage.openIDGrant(id: "g2", at: t0) == nil)
            #expect(try await storage.openIDGrant(id: "g3", at: t0) != nil, "another account's grant stays")
            #expect(try await storage.session(tokenHash: Conformance.token(1)) == nil)
            #expect(try await storage.session(tokenHash: Conformance.token(56)) != nil, "the account's other session stays")
            #expect(try await storage.pendingEvents(limit: 100).last?.kind == .disassociatingAccount)
            #expect(try await storage.auditEntries(AuditQuery(accountId: "a1", limit: 50)).map(\.record.type).contains("test.logout.1"))
            #expect(try await storage.endSessionAndGrants(sessionId: "s-a1", accountId: "a1", events: [], audit: { _ in [] }) == nil, "ended already")
        }
    }

    @Test("consents are remembered per account and client, replaced, listed, and revoked with the client's grants", arguments: IdentityStorageKind.allCases)
    func consents(kind: IdentityStorageKind) async throws {
        let t0 = Self.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Conformance.account(storage, "a2", "jane@stanford.edu", sessionByte: 2)
            let consent = StoredOpenIDConsent(accountId: "a1", clientId: "app", scopes: ["openid", "email"], grantedAt: t0)
            await Self.expectNotFound({
                try await storage.saveOpenIDConsent(StoredOpenIDConsent(accountId: "missing", clientId: "app", scopes: ["openid"], grantedAt: t0), audit: [])
            }, "no such account")
            try await storage.saveOpenIDConsent(consent, audit: Self.audit("a1", "test.consent"))
            try await storage.saveOpenIDConsent(StoredOpenIDConsent(accountId: "a2", clientId: "app", scopes: ["openid"], grantedAt: t0), audit: [])
            #expect(try await storage.openIDConsent(accountId: "a1", clientId: "app") == consent)
            #expect(try await storage.openIDConsent(accountId: "a1", clientId: "dashboard") == nil)
            let wider = StoredOpenIDConsent(accountId: "a1", clientId: "app", scopes: ["openid", "email", "profile"], grantedAt: t0.adding(.seconds(5)))
            try await storage.saveOpenIDConsent(wider, audit: [])
            let dashboard = StoredOpenIDConsent(accountId: "a1", clientId: "dashboard", scopes: ["openid"], grantedAt: t0.adding(.seconds(9)))
            try await storage.saveOpenIDConsent(dashboard, audit: [])
            #expect(try await storage.openIDConsents(accountId: "a1") == [wider, dashboard])
            #expect(try await storage.auditEntries(AuditQuery(accountId: "a1", limit: 50)).map(\.record.type).contains("test.consent"))

            try await Self.granted(storage, "g1", codeByte: 60, refreshByte: 61)
            try await Self.granted(storage, "g2", codeByte: 62, refreshByte: 63)
            try await Self.granted(storage, "g3", codeByte: 64, refreshByte: nil, client: "dashboard")
            #expect(try await storage.revokeOpenIDClient(accountId: "a1", clientId: "app", audit: Self.audit("a1", "test.client.revoked")) == 2)
            #expect(try await storage.openIDConsents(accountId: "a1") == [dashboard])
            #expect(try await storage.openIDGrants(accountId: "a1", at: t0).map(\.id) == ["g3"])
            #expect(try await storage.openIDConsent(accountId: "a2", clientId: "app") != nil, "another account's consent stays")
            #expect(try await storage.revokeOpenIDClient(accountId: "a1", clientId: "app", audit: Self.audit("a1", "test.wrong")) == nil)
            #expect(!(try await storage.auditEntries(AuditQuery(accountId: "a1", limit: 50)).map(\.record.type).contains("test.wrong")))
            // A grant without a consent (a first-party client's) is revoked the same way.
            #expect(try await storage.revokeOpenIDClient(accountId: "a1", clientId: "dashboard", audit: []) == 1)
            #expect(try await storage.openIDConsents(accountId: "a1").isEmpty)
            // Deleting the account forgets its consents.
            #expect(try await storage.deleteAccount(accountId: "a2", events: [], profileCleanupAt: t0))
            #expect(try await storage.openIDConsents(accountId: "a2").isEmpty)
        }
    }

    @Test("retention forgets codes past their keeping, ended grants and expired refresh tokens (and then a reuse is only unknown)", arguments: IdentityStorageKind.allCases)
    func retention(kind: IdentityStorageKind) async throws {
        let t0 = Self.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Self.granted(storage, "g1", codeByte: 70, refreshByte: 71)
            try await Self.granted(storage, "g2", codeByte: 72, refreshByte: 73)
            // Both stale now: made under a credential version the account has left (still rows until retention).
            _ = try await storage.changePassword(accountId: "a1", passwordHash: "$argon2id$other", keeping: "s-a1") { _ in [] }
            _ = try await storage.pruneExpired(at: t0.adding(.seconds(601)), profileCleanupAt: t0, limit: 100) { _ in [] }
            // The used code was forgotten at its keeping's end: a late reuse is unknown, and revokes nothing.
            #expect(try await storage.redeemAuthorizationCode(codeHash: Conformance.token(70), at: t0) { _ in nil } == .unknown)
            // The stale grant and its tokens are gone: even a lookup that ignores liveness finds nothing.
            #expect(try await storage.openIDGrant(refreshTokenHash: Conformance.token(73), clientId: "app") == nil)
            #expect(try await storage.openIDGrant(refreshTokenHash: Conformance.token(71), clientId: "app") == nil)
        }
    }

    @Test("a fresh grant outlives retention while its refresh token is current; an expired rotated token is forgotten", arguments: IdentityStorageKind.allCases)
    func retentionKeepsLive(kind: IdentityStorageKind) async throws {
        let t0 = Self.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Self.granted(storage, "g1", codeByte: 80, refreshByte: 81)
            let next = StoredRefreshToken(tokenHash: Conformance.token(82), expiresAt: t0.adding(.seconds(7_200)))
            guard case .rotated = try await storage.rotateRefreshToken(tokenHash: Conformance.token(81), at: t0, replacement: next, check: { _ in true }) else {
                Issue.record("not rotated")
                return
            }
            _ = try await storage.pruneExpired(at: t0.adding(.seconds(3_601)), profileCleanupAt: t0, limit: 100) { _ in [] }
            #expect(try await storage.openIDGrant(id: "g1", at: t0.adding(.seconds(3_601))) != nil)
            // The rotated-out token expired and was forgotten: presenting it now is unknown, not a reuse.
            let third = StoredRefreshToken(tokenHash: Conformance.token(83), expiresAt: t0.adding(.seconds(7_200)))
            #expect(try await storage.rotateRefreshToken(tokenHash: Conformance.token(81), at: t0.adding(.seconds(3_601)), replacement: third) { _ in true } == .unknown)
            #expect(try await storage.openIDGrant(id: "g1", at: t0.adding(.seconds(3_601))) != nil)
        }
    }

    /// Many rounds of several tasks at once on the global executor's threads (and, on PostgreSQL, connections).
    @Test("under concurrency a code is redeemed exactly once and the others' reuse revokes its grant", arguments: IdentityStorageKind.allCases)
    func codeOnce(kind: IdentityStorageKind) async throws {
        let t0 = Self.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            for round in 0..<20 {
                let code = Self.code(UInt8(100 + round))
                try await storage.createAuthorizationCode(code)
                let outcomes = try await withThrowingTaskGroup(of: AuthorizationCodeRedemption.self) { group in
                    for attempt in 0..<6 {
                        group.addTask {
                            try await storage.redeemAuthorizationCode(codeHash: code.codeHash, at: t0) { Self.grant("g\(round)-\(attempt)", from: $0, refreshByte: nil) }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let redeemed = outcomes.compactMap { if case .redeemed(_, let grant) = $0 { grant.id } else { nil } }
                let reused = outcomes.filter { if case .reused = $0 { true } else { false } }
                #expect(redeemed.count == 1 && reused.count == 5, "round \(round): \(outcomes)")
                #expect(outcomes.contains(.reused(accountId: "a1", clientId: "app", revokedGrant: true)), "round \(round)")
                #expect(try await storage.openIDGrants(accountId: "a1", at: t0).isEmpty, "round \(round)")
            }
        }
    }

    @Test("under concurrency a refresh token is rotated exactly once and the others' reuse revokes the family", arguments: IdentityStorageKind.allCases)
    func refreshOnce(kind: IdentityStorageKind) async throws {
        let t0 = Self.t0
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            for round in 0..<20 {
                let base = UInt8(20 + round * 10)
                try await Self.granted(storage, "g\(round)", codeByte: base, refreshByte: base + 1)
                let outcomes = try await withThrowingTaskGroup(of: RefreshTokenRotation.self) { group in
                    for attempt in 0..<6 {
                        group.addTask {
                            let replacement = StoredRefreshToken(tokenHash: Conformance.token(base + 2 + UInt8(attempt)), expiresAt: t0.adding(.seconds(7_200)))
                            return try await storage.rotateRefreshToken(tokenHash: Conformance.token(base + 1), at: t0, replacement: replacement) { _ in true }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let rotated = outcomes.filter { if case .rotated = $0 { true } else { false } }
                let reused = outcomes.filter { if case .reused = $0 { true } else { false } }
                // One rotates; the next, seeing the token used, ends the family; the rest find nothing left.
                #expect(rotated.count == 1 && reused.count == 1 && outcomes.filter { $0 == .unknown }.count == 4, "round \(round): \(outcomes)")
                #expect(try await storage.openIDGrant(id: "g\(round)", at: t0) == nil, "round \(round)")
            }
        }
    }
}
