import Foundation
@testable import IdentityService
import KontoModel
import Testing

/// What every ``IdentityStorage`` must do, checked on memory and PostgreSQL alike.
@Suite("Identity storage conformance")
struct IdentityStorageConformanceTests {
    static let t0 = Timestamp(milliseconds: 1_800_000_000_000)

    static func credential(_ accountId: String, _ userId: String?, at time: Timestamp = t0) -> StoredCredential {
        StoredCredential(accountId: accountId, userId: userId, normalizedUserId: userId?.lowercased(), passwordHash: userId.map { _ in "$argon2id$stub" }, createdAt: time)
    }

    static func session(_ id: String, account: String, byte: UInt8, at time: Timestamp = t0, version: Int64 = 1) -> StoredSession {
        StoredSession(
            id: id,
            accountId: account,
            tokenHash: [UInt8](repeating: byte, count: 32),
            createdAt: time,
            idleExpiresAt: time.adding(.seconds(600)),
            absoluteExpiresAt: time.adding(.seconds(3_600)),
            privilegedUntil: nil,
            credentialVersion: version
        )
    }

    static func token(_ byte: UInt8) -> [UInt8] {
        [UInt8](repeating: byte, count: 32)
    }

    static func event(_ accountId: String, _ kind: AccountEvent.Kind) -> AccountEvent {
        AccountEvent(time: t0.date, accountId: accountId, kind: kind)
    }

    /// Reserves and activates an account with one session.
    static func account(_ storage: any IdentityStorage, _ accountId: String, _ userId: String, sessionByte: UInt8) async throws {
        try await storage.reserveAccount(credential(accountId, userId))
        try await storage.activateAccount(accountId: accountId, session: session("s-\(accountId)", account: accountId, byte: sessionByte), events: [event(accountId, .passwordChanged)])
    }

    @Test("a reservation takes the userId but cannot log in until activated; activation writes its events", arguments: IdentityStorageKind.allCases)
    func reservation(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await storage.reserveAccount(Self.credential("a1", "Leland@Stanford.edu"))
            #expect(try await storage.credential(normalizedUserId: "leland@stanford.edu") == nil)
            #expect(try await storage.credential(accountId: "a1") == nil)
            do {
                try await storage.reserveAccount(Self.credential("a2", "LELAND@stanford.edu"))
                Issue.record("a taken userId was reserved twice")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .conflict)
            }
            let event = Self.event("a1", .associatedAccount)
            try await storage.activateAccount(accountId: "a1", session: Self.session("s1", account: "a1", byte: 1), events: [event])
            let stored = try #require(try await storage.credential(normalizedUserId: "leland@stanford.edu"))
            #expect(stored.accountId == "a1")
            #expect(stored.userId == "Leland@Stanford.edu")
            #expect(stored.passwordHash == "$argon2id$stub")
            #expect(stored.createdAt == Self.t0)
            #expect(try await storage.pendingEvents(limit: 10).map(\.id) == [event.id])
            // Activating again finds no reservation.
            do {
                try await storage.activateAccount(accountId: "a1", session: Self.session("s2", account: "a1", byte: 2), events: [])
                Issue.record("activated twice")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .notFound)
            }
        }
    }

    @Test("abandoning a reservation frees the userId and can schedule the profile's clean-up", arguments: IdentityStorageKind.allCases)
    func abandon(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await storage.reserveAccount(Self.credential("a1", "leland@stanford.edu"))
            try await storage.abandonAccount(accountId: "a1", profileCleanupAt: Self.t0.adding(.seconds(30)))
            try await storage.reserveAccount(Self.credential("a2", "leland@stanford.edu"))
            #expect(try await storage.dueProfileCleanups(at: Self.t0, limit: 10).isEmpty)
            #expect(try await storage.dueProfileCleanups(at: Self.t0.adding(.seconds(30)), limit: 10) == ["a1"])
            try await storage.postponeProfileCleanup(accountId: "a1", until: Self.t0.adding(.seconds(60)))
            #expect(try await storage.dueProfileCleanups(at: Self.t0.adding(.seconds(59)), limit: 10).isEmpty)
            try await storage.finishProfileCleanup(accountId: "a1")
            #expect(try await storage.dueProfileCleanups(at: Self.t0.adding(.seconds(3_600)), limit: 10).isEmpty)
            // An active account is not abandoned.
            try await Self.account(storage, "a3", "jane@stanford.edu", sessionByte: 3)
            try await storage.abandonAccount(accountId: "a3", profileCleanupAt: nil)
            #expect(try await storage.credential(accountId: "a3") != nil)
        }
    }

    @Test("stale reservations are abandoned with their clean-up; fresh ones and active accounts stay", arguments: IdentityStorageKind.allCases)
    func staleReservations(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await storage.reserveAccount(Self.credential("old", "old@stanford.edu", at: Self.t0))
            try await storage.reserveAccount(Self.credential("new", "new@stanford.edu", at: Self.t0.adding(.seconds(100))))
            try await Self.account(storage, "active", "active@stanford.edu", sessionByte: 9)
            #expect(try await storage.abandonStaleReservations(before: Self.t0.adding(.seconds(50)), profileCleanupAt: Self.t0) == 1)
            #expect(try await storage.dueProfileCleanups(at: Self.t0, limit: 10) == ["old"])
            try await storage.reserveAccount(Self.credential("again", "old@stanford.edu"))
            do {
                try await storage.reserveAccount(Self.credential("again2", "new@stanford.edu"))
                Issue.record("a fresh reservation was dropped")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .conflict)
            }
        }
    }

    @Test("sessions: lookup by token hash with the account's anonymity and userId, touch never moves back or past the absolute end", arguments: IdentityStorageKind.allCases)
    func sessions(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await storage.createAnonymousAccount(Self.credential("anon", nil), session: Self.session("s-anon", account: "anon", byte: 2), events: [])
            let session = try #require(try await storage.session(tokenHash: [UInt8](repeating: 1, count: 32)))
            var expected = Self.session("s-a1", account: "a1", byte: 1)
            // Found with its account's credential, every column of it but the password hash.
            expected.account = Self.credential("a1", "leland@stanford.edu")
            expected.account?.passwordHash = nil
            #expect(session == expected)
            let anonymous = try await storage.session(tokenHash: [UInt8](repeating: 2, count: 32))
            #expect(anonymous?.accountIsAnonymous == true)
            #expect(anonymous?.account == Self.credential("anon", nil))
            #expect(try await storage.session(tokenHash: [UInt8](repeating: 7, count: 32)) == nil)

            try await storage.touchSession(id: "s-a1", idleExpiresAt: Self.t0.adding(.seconds(900)), at: Self.t0.adding(.seconds(60)))
            #expect(try await storage.session(tokenHash: session.tokenHash)?.idleExpiresAt == Self.t0.adding(.seconds(900)))
            try await storage.touchSession(id: "s-a1", idleExpiresAt: Self.t0.adding(.seconds(700)), at: Self.t0.adding(.seconds(60)))
            #expect(try await storage.session(tokenHash: session.tokenHash)?.idleExpiresAt == Self.t0.adding(.seconds(900)))
            try await storage.touchSession(id: "s-a1", idleExpiresAt: Self.t0.adding(.seconds(99_999)), at: Self.t0.adding(.seconds(60)))
            #expect(try await storage.session(tokenHash: session.tokenHash)?.idleExpiresAt == Self.t0.adding(.seconds(3_600)))

            // A replacement (reauthentication): the old token stops, the new one works, expiry and version kept.
            var replacement = session
            replacement.id = "s-a1-fresh"
            replacement.tokenHash = Self.token(4)
            replacement.privilegedUntil = Self.t0.adding(.seconds(300))
            replacement.account = nil
            try await storage.replaceSession(id: "s-a1", with: replacement)
            #expect(try await storage.session(tokenHash: session.tokenHash) == nil)
            #expect(try await storage.session(tokenHash: Self.token(4))?.privilegedUntil == Self.t0.adding(.seconds(300)))
            do {
                try await storage.replaceSession(id: "s-a1", with: replacement)
                Issue.record("replaced a session that is gone")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .notFound)
            }
            do {
                try await storage.createSession(Self.session("s-x", account: "nobody", byte: 5), events: [])
                Issue.record("a session for a missing account")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .notFound)
            }
        }
    }

    @Test("ending sessions: one, all but one, all; events only when something ended", arguments: IdentityStorageKind.allCases)
    func endingSessions(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            for byte: UInt8 in 2...4 {
                try await storage.createSession(Self.session("s\(byte)", account: "a1", byte: byte), events: [])
            }
            let before = try await storage.pendingEvents(limit: 100).count
            #expect(try await storage.deleteSession(id: "s2", events: [Self.event("a1", .sessionsRevoked)]))
            #expect(try await !storage.deleteSession(id: "s2", events: [Self.event("a1", .sessionsRevoked)]))
            #expect(try await storage.pendingEvents(limit: 100).count == before + 1)
            #expect(try await storage.deleteSessions(accountId: "a1", keeping: "s3") { ended in
                [Self.event("a1", .userIdChanged(previous: "\(ended)", new: "x"))]
            } == 2)
            #expect(try await storage.pendingEvents(limit: 100).last?.kind == .userIdChanged(previous: "2", new: "x"))
            #expect(try await storage.session(tokenHash: [UInt8](repeating: 3, count: 32)) != nil)
            #expect(try await storage.deleteSessions(accountId: "a1", keeping: nil) { _ in [] } == 1)
        }
    }

    @Test("password and userId changes: taken ids refused, other sessions and reset tokens end, the version rises", arguments: IdentityStorageKind.allCases)
    func credentialChanges(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Self.account(storage, "a2", "jane@stanford.edu", sessionByte: 2)
            try await storage.createSession(Self.session("s-extra", account: "a1", byte: 3), events: [])
            try await storage.createResetToken(tokenHash: Self.token(8), accountId: "a1", expiresAt: Self.t0.adding(.seconds(60)), events: [])
            #expect(try await storage.credential(accountId: "a1")?.credentialVersion == 1)
            #expect(try await storage.changePassword(accountId: "a1", passwordHash: "new", keeping: "s-a1") { ended in
                ended > 0 ? [Self.event("a1", .sessionsRevoked)] : []
            } == 1)
            #expect(try await storage.credential(accountId: "a1")?.passwordHash == "new")
            #expect(try await storage.credential(accountId: "a1")?.credentialVersion == 2)
            #expect(try await storage.session(tokenHash: Self.token(1))?.credentialVersion == 2, "the changing session moves to the new version")
            #expect(try await storage.session(tokenHash: Self.token(3)) == nil)
            #expect(try await storage.resetTokenAccount(tokenHash: Self.token(8), at: Self.t0) == nil, "a change ends every reset token")
            #expect(try await storage.pendingEvents(limit: 100).last?.kind == .sessionsRevoked)
            do {
                _ = try await storage.changeUserId(accountId: "a1", userId: "Jane@stanford.edu", normalizedUserId: "jane@stanford.edu", keeping: nil) { _ in [] }
                Issue.record("took another account's userId")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .conflict)
            }
            try await storage.createSession(Self.session("s-extra2", account: "a1", byte: 5, version: 2), events: [])
            try await storage.createResetToken(tokenHash: Self.token(9), accountId: "a1", expiresAt: Self.t0.adding(.seconds(60)), events: [])
            #expect(try await storage.changeUserId(accountId: "a1", userId: "Stanford@stanford.edu", normalizedUserId: "stanford@stanford.edu", keeping: "s-a1") { ended in
                [Self.event("a1", .userIdChanged(previous: "\(ended)", new: "x"))]
            } == 1)
            #expect(try await storage.pendingEvents(limit: 100).last?.kind == .userIdChanged(previous: "1", new: "x"))
            #expect(try await storage.credential(normalizedUserId: "leland@stanford.edu") == nil)
            #expect(try await storage.credential(normalizedUserId: "stanford@stanford.edu")?.userId == "Stanford@stanford.edu")
            #expect(try await storage.credential(accountId: "a1")?.credentialVersion == 3)
            #expect(try await storage.session(tokenHash: Self.token(1))?.account?.userId == "Stanford@stanford.edu")
            #expect(try await storage.session(tokenHash: Self.token(5)) == nil)
            #expect(try await storage.resetTokenAccount(tokenHash: Self.token(9), at: Self.t0) == nil)
            do {
                _ = try await storage.changePassword(accountId: "missing", passwordHash: "x", keeping: nil) { _ in [] }
                Issue.record("changed a missing account's password")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .notFound)
            }
        }
    }

    @Test("an anonymous account is upgraded once, its sessions replaced by the fresh one", arguments: IdentityStorageKind.allCases)
    func upgrade(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await storage.createAnonymousAccount(Self.credential("anon", nil), session: Self.session("s-anon", account: "anon", byte: 2), events: [])
            try await storage.createSession(Self.session("s-anon2", account: "anon", byte: 3), events: [])
            let fresh = Self.session("s-fresh", account: "anon", byte: 4, version: 2)
            do {
                try await storage.upgradeAnonymous(accountId: "anon", userId: "leland@stanford.edu", normalizedUserId: "leland@stanford.edu", passwordHash: "h", session: fresh, events: [])
                Issue.record("upgraded to a taken userId")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .conflict)
            }
            try await storage.upgradeAnonymous(accountId: "anon", userId: "Jane@stanford.edu", normalizedUserId: "jane@stanford.edu", passwordHash: "h", session: fresh, events: [])
            #expect(try await storage.session(tokenHash: Self.token(2)) == nil, "the anonymous token stops working")
            #expect(try await storage.session(tokenHash: Self.token(3)) == nil)
            let upgraded = try await storage.session(tokenHash: Self.token(4))
            #expect(upgraded?.accountIsAnonymous == false)
            #expect(upgraded?.account?.userId == "Jane@stanford.edu", "as given, not normalised")
            do {
                try await storage.upgradeAnonymous(accountId: "anon", userId: "x@stanford.edu", normalizedUserId: "x@stanford.edu", passwordHash: "h", session: Self.session("s-again", account: "anon", byte: 5, version: 3), events: [])
                Issue.record("upgraded twice")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .notFound)
            }
        }
    }

    @Test("deleting an account removes credentials, sessions and reset tokens, writes its events first and schedules the profile", arguments: IdentityStorageKind.allCases)
    func deleteAccount(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await storage.createResetToken(tokenHash: [UInt8](repeating: 8, count: 32), accountId: "a1", expiresAt: Self.t0.adding(.seconds(60)), events: [])
            let deleting = Self.event("a1", .deletingAccount)
            #expect(try await storage.deleteAccount(accountId: "a1", events: [deleting], profileCleanupAt: Self.t0))
            #expect(try await storage.credential(accountId: "a1") == nil)
            #expect(try await storage.session(tokenHash: [UInt8](repeating: 1, count: 32)) == nil)
            #expect(try await storage.confirmPasswordReset(tokenHash: [UInt8](repeating: 8, count: 32), at: Self.t0, passwordHash: "x") { _, _ in [] } == nil)
            #expect(try await storage.dueProfileCleanups(at: Self.t0, limit: 10) == ["a1"])
            #expect(try await storage.pendingEvents(limit: 10).last?.id == deleting.id)
            #expect(try await !storage.deleteAccount(accountId: "a1", events: [Self.event("a1", .deletingAccount)], profileCleanupAt: Self.t0))
            #expect(try await storage.pendingEvents(limit: 10).filter { $0.kind == .deletingAccount }.count == 1)
            try await Self.account(storage, "a2", "leland@stanford.edu", sessionByte: 1)
        }
    }

    @Test("failure counts: per key, forgotten outside the window, cleared, pruned", arguments: IdentityStorageKind.allCases)
    func failures(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let window = Duration.seconds(100)
            try await storage.recordFailures(keys: ["user:a", "address:x"], at: Self.t0, window: window)
            try await storage.recordFailures(keys: ["user:a"], at: Self.t0.adding(.seconds(10)), window: window)
            #expect(try await storage.failures(keys: ["user:a", "address:x", "user:b"], at: Self.t0.adding(.seconds(20)), window: window) == [
                FailureCount(count: 2, lastFailureAt: Self.t0.adding(.seconds(10))),
                FailureCount(count: 1, lastFailureAt: Self.t0),
                .none,
            ])
            // Out of the window: forgotten, and a new failure starts again at one.
            #expect(try await storage.failures(keys: ["address:x"], at: Self.t0.adding(.seconds(101)), window: window) == [.none])
            try await storage.recordFailures(keys: ["address:x"], at: Self.t0.adding(.seconds(101)), window: window)
            #expect(try await storage.failures(keys: ["address:x"], at: Self.t0.adding(.seconds(101)), window: window).first?.count == 1)
            try await storage.clearFailures(key: "user:a")
            #expect(try await storage.failures(keys: ["user:a"], at: Self.t0.adding(.seconds(20)), window: window) == [.none])
            try await storage.recordFailures(keys: ["user:old"], at: Self.t0, window: window)
            #expect(try await storage.pruneFailures(before: Self.t0.adding(.seconds(50))) == 1)
            #expect(try await storage.failures(keys: ["address:x"], at: Self.t0.adding(.seconds(101)), window: window).first?.count == 1)
        }
    }

    @Test("known clients: remembered for an account only, known since a time, pruned, gone with the account", arguments: IdentityStorageKind.allCases)
    func knownClients(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            try await Self.account(storage, "a2", "jane@stanford.edu", sessionByte: 2)
            let (address, device, other) = (Self.token(10), Self.token(11), Self.token(12))
            try await storage.rememberClients(accountId: "a1", clients: [address, device], at: Self.t0)
            try await storage.rememberClients(accountId: "missing", clients: [other], at: Self.t0)
            #expect(try await storage.isKnownClient(accountId: "a1", clients: [other, device], since: Self.t0))
            #expect(try await !storage.isKnownClient(accountId: "a1", clients: [other], since: Self.t0))
            #expect(try await !storage.isKnownClient(accountId: "a2", clients: [address], since: Self.t0), "per account")
            #expect(try await !storage.isKnownClient(accountId: "a1", clients: [address], since: Self.t0.adding(.seconds(1))), "not since then")
            // A later sign-in moves it forward; pruning forgets the others.
            try await storage.rememberClients(accountId: "a1", clients: [address], at: Self.t0.adding(.seconds(100)))
            #expect(try await storage.pruneKnownClients(before: Self.t0.adding(.seconds(50))) == 1)
            #expect(try await storage.isKnownClient(accountId: "a1", clients: [address], since: Self.t0.adding(.seconds(100))))
            #expect(try await !storage.isKnownClient(accountId: "a1", clients: [device], since: Self.t0))
            #expect(try await storage.deleteAccount(accountId: "a1", events: [], profileCleanupAt: Self.t0))
            #expect(try await storage.pruneKnownClients(before: Self.t0.adding(.seconds(1_000))) == 0, "gone with the account")
        }
    }

    @Test("a login's lookup gives the keys' counts and the credential together, as the two reads would", arguments: IdentityStorageKind.allCases)
    func loginLookup(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let window = Duration.seconds(100)
            let now = Self.t0.adding(.seconds(20))
            let keys = ["user:a", "address:x", "user:b"]
            // Nothing at all: no counts, no account.
            #expect(try await storage.loginLookup(normalizedUserId: "leland@stanford.edu", keys: keys, at: now, window: window) == LoginLookup(counts: [.none, .none, .none], credential: nil))
            try await storage.recordFailures(keys: ["address:x", "user:a"], at: Self.t0, window: window)
            try await storage.recordFailures(keys: ["user:a"], at: Self.t0.adding(.seconds(10)), window: window)
            try await storage.recordFailures(keys: ["user:b"], at: Self.t0.adding(.seconds(-200)), window: window)
            // Counts without an account; a pending account is no account.
            try await storage.reserveAccount(Self.credential("a1", "Leland@Stanford.edu"))
            let expectedCounts = [FailureCount(count: 2, lastFailureAt: Self.t0.adding(.seconds(10))), FailureCount(count: 1, lastFailureAt: Self.t0), .none]
            #expect(try await storage.loginLookup(normalizedUserId: "leland@stanford.edu", keys: keys, at: now, window: window) == LoginLookup(counts: expectedCounts, credential: nil))
            try await storage.activateAccount(accountId: "a1", session: Self.session("s1", account: "a1", byte: 1), events: [])
            // Both, the same as the two separate reads.
            let lookup = try await storage.loginLookup(normalizedUserId: "leland@stanford.edu", keys: keys, at: now, window: window)
            #expect(lookup.counts == expectedCounts)
            #expect(lookup.counts == (try await storage.failures(keys: keys, at: now, window: window)))
            #expect(lookup.credential == (try await storage.credential(normalizedUserId: "leland@stanford.edu")))
            #expect(lookup.credential?.accountId == "a1")
            // An account without failures.
            #expect(try await storage.loginLookup(normalizedUserId: "leland@stanford.edu", keys: ["user:c"], at: now, window: window).counts == [.none])
        }
    }

    @Test("a session is created with its events in order, only for an account that exists and is not pending", arguments: IdentityStorageKind.allCases)
    func createSession(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await storage.reserveAccount(Self.credential("a1", "leland@stanford.edu"))
            for accountId in ["a1", "missing"] {
                do {
                    try await storage.createSession(Self.session("s-\(accountId)", account: accountId, byte: 9), events: [Self.event(accountId, .passwordChanged)])
                    Issue.record("a session for \(accountId)")
                } catch {
                    #expect((error as? IdentityStorageError)?.code == .notFound)
                }
            }
            #expect(try await storage.session(tokenHash: [UInt8](repeating: 9, count: 32)) == nil)
            #expect(try await storage.pendingEvents(limit: 10).isEmpty)
            try await storage.activateAccount(accountId: "a1", session: Self.session("s1", account: "a1", byte: 1), events: [])
            let events = [Self.event("a1", .associatedAccount), Self.event("a1", .sessionsRevoked), Self.event("a1", .passwordChanged)]
            try await storage.createSession(Self.session("s2", account: "a1", byte: 2), events: events)
            #expect(try await storage.session(tokenHash: [UInt8](repeating: 2, count: 32))?.id == "s2")
            #expect(try await storage.pendingEvents(limit: 10) == events)
            // No events: the session alone.
            try await storage.createSession(Self.session("s3", account: "a1", byte: 3), events: [])
            #expect(try await storage.session(tokenHash: [UInt8](repeating: 3, count: 32))?.id == "s3")
            #expect(try await storage.pendingEvents(limit: 10).count == 3)
        }
    }

    @Test("a reset token works once, not after expiry, and ends every session and every other token", arguments: IdentityStorageKind.allCases)
    func resetTokens(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            let token = [UInt8](repeating: 8, count: 32)
            try await storage.createResetToken(tokenHash: token, accountId: "a1", expiresAt: Self.t0.adding(.seconds(60)), events: [Self.event("a1", .passwordChanged)])
            try await storage.createResetToken(tokenHash: Self.token(6), accountId: "a1", expiresAt: Self.t0.adding(.seconds(60)), events: [])
            #expect(try await storage.resetTokenAccount(tokenHash: token, at: Self.t0.adding(.seconds(59))) == "a1")
            #expect(try await storage.resetTokenAccount(tokenHash: token, at: Self.t0.adding(.seconds(60))) == nil, "expired")
            #expect(try await storage.resetTokenAccount(tokenHash: Self.token(7), at: Self.t0) == nil, "unknown")
            let confirmed = try await storage.confirmPasswordReset(tokenHash: token, at: Self.t0.adding(.seconds(59)), passwordHash: "reset") { accountId, ended in
                [Self.event(accountId, .userIdChanged(previous: "\(ended)", new: accountId))]
            }
            #expect(confirmed == ConfirmedPasswordReset(accountId: "a1", sessionsEnded: 1))
            #expect(try await storage.credential(accountId: "a1")?.passwordHash == "reset")
            #expect(try await storage.credential(accountId: "a1")?.credentialVersion == 2)
            #expect(try await storage.resetTokenAccount(tokenHash: Self.token(6), at: Self.t0) == nil, "the other token ended with the reset")
            #expect(try await storage.pendingEvents(limit: 10).last?.kind == .userIdChanged(previous: "1", new: "a1"))
            #expect(try await storage.confirmPasswordReset(tokenHash: token, at: Self.t0, passwordHash: "again") { _, _ in [] } == nil)

            let expiring = [UInt8](repeating: 9, count: 32)
            try await storage.createResetToken(tokenHash: expiring, accountId: "a1", expiresAt: Self.t0.adding(.seconds(60)), events: [])
            #expect(try await storage.confirmPasswordReset(tokenHash: expiring, at: Self.t0.adding(.seconds(60)), passwordHash: "late") { _, _ in [] } == nil)
            #expect(try await storage.credential(accountId: "a1")?.passwordHash == "reset")
            do {
                try await storage.createResetToken(tokenHash: [UInt8](repeating: 7, count: 32), accountId: "missing", expiresAt: Self.t0, events: [])
                Issue.record("a token for a missing account")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .notFound)
            }
        }
    }

    @Test("a session exists only under its credential's version: created only while it is current, invalid once it rose, a rehash only while it holds", arguments: IdentityStorageKind.allCases)
    func credentialVersions(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Self.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
            let checked = try #require(try await storage.credential(normalizedUserId: "leland@stanford.edu"))
            #expect(checked.credentialVersion == 1)
            // A login checked the password at version 1; the owner changes it before the login's session is written.
            _ = try await storage.changePassword(accountId: "a1", passwordHash: "new", keeping: nil) { _ in [] }
            do {
                try await storage.createSession(Self.session("s-late", account: "a1", byte: 2, version: checked.credentialVersion), events: [Self.event("a1", .passwordChanged)])
                Issue.record("a session under the previous credential was created")
            } catch {
                #expect((error as? IdentityStorageError)?.code == .notFound)
            }
            #expect(try await storage.session(tokenHash: Self.token(2)) == nil)
            #expect(try await storage.session(tokenHash: Self.token(1)) == nil, "the change ended every session")
            // A rehash of the old password (read at version 1) does not overwrite the new hash.
            #expect(try await !storage.rehashPassword(accountId: "a1", passwordHash: "old-rehashed", credentialVersion: checked.credentialVersion))
            #expect(try await storage.credential(accountId: "a1")?.passwordHash == "new")
            #expect(try await storage.rehashPassword(accountId: "a1", passwordHash: "new-rehashed", credentialVersion: 2))
            #expect(try await storage.credential(accountId: "a1")?.passwordHash == "new-rehashed")
            #expect(try await storage.credential(accountId: "a1")?.credentialVersion == 2, "a rehash is not a change")
            try await storage.createSession(Self.session("s-now", account: "a1", byte: 3, version: 2), events: [])
            #expect(try await storage.session(tokenHash: Self.token(3))?.credentialVersion == 2)
        }
    }

    @Test("events come back in the order written, with every field", arguments: IdentityStorageKind.allCases)
    func outbox(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let events = [
                Self.event("a1", .detailsChanged(keys: ["name", "userId"])),
                Self.event("a1", .passwordResetRequested(userId: "leland@stanford.edu", token: SealedResetToken(box: "t"), expiresAt: Self.t0.date)),
                Self.event("a1", .userIdChanged(previous: "a", new: "b")),
            ]
            try await storage.reserveAccount(Self.credential("a1", "leland@stanford.edu"))
            try await storage.activateAccount(accountId: "a1", session: Self.session("s1", account: "a1", byte: 1), events: events)
            #expect(try await storage.pendingEvents(limit: 10) == events)
            #expect(try await storage.pendingEvents(limit: 2) == Array(events.prefix(2)))
        }
    }
}

extension IdentityStorageConformanceTests {
    @Test("an allowance is taken up to its limit in a window, a refusal counts nothing, and concurrent takers never pass it together", arguments: IdentityStorageKind.allCases)
    func allowances(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let window = Duration.seconds(3_600)
            for _ in 1...3 { #expect(try await storage.takeAllowance(key: "mail:a", limit: 3, at: Self.t0, window: window) == nil) }
            let used = try #require(try await storage.takeAllowance(key: "mail:a", limit: 3, at: Self.t0.adding(.seconds(10)), window: window))
            #expect(used.count == 3 && used.lastFailureAt == Self.t0)
            // Out of the window it starts again.
            #expect(try await storage.takeAllowance(key: "mail:a", limit: 3, at: Self.t0.adding(.seconds(3_601)), window: window) == nil)
            #expect(try await storage.failures(keys: ["mail:a"], at: Self.t0.adding(.seconds(3_601)), window: window)[0].count == 1)
            // Real threads: of twelve at once, exactly the limit are taken, every round.
            for round in 1...15 {
                let key = "mail:race-\(round)"
                let taken = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<12 { group.addTask { try await storage.takeAllowance(key: key, limit: 4, at: Self.t0, window: window) == nil } }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(taken == 4, "round \(round): \(taken) taken")
            }
        }
    }
}

