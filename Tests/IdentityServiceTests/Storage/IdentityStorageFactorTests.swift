import Foundation
@testable import IdentityService
import KontoModel
import Testing

/// The second factors' storage, on memory and PostgreSQL alike: each code and challenge works once, also when
/// several threads try at the same moment.
@Suite("Identity storage: second factors")
struct IdentityStorageFactorTests {
    typealias Conformance = IdentityStorageConformanceTests
    static let t0 = Conformance.t0

    static func totp(_ id: String, account: String = "a1", at time: Timestamp = t0) -> StoredFactor {
        StoredFactor(id: id, accountId: account, kind: .totp, name: "Authenticator app", sealedSecret: [1, 2, 3], confirmed: false, createdAt: time)
    }

    @Test("a TOTP enrolment is pending until confirmed; a new one replaces it; confirming announces it and uses its step", arguments: IdentityStorageKind.allCases)
    func enrolment(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "ada@example.org", sessionByte: 1)
            try await Conformance.account(storage, "a2", "bob@example.org", sessionByte: 2)
            let before = try await storage.pendingEvents(limit: 100).count
            try await storage.addPendingFactor(Self.totp("f1"))
            try await storage.addPendingFactor(Self.totp("f2", at: Self.t0.adding(.seconds(1))))
            var factors = try await storage.factors(accountId: "a1")
            #expect(factors.map(\.id) == ["f2"])
            #expect(factors.first?.confirmed == false && factors.first?.sealedSecret == [1, 2, 3])
            #expect(factors.allSatisfy { !$0.demandsSecondFactor })
            #expect(try await storage.loginLookup(normalizedUserId: "ada@example.org", keys: [], at: Self.t0, window: .seconds(60)).demandsSecondFactor == false)
            let added = Conformance.event("a1", .factorAdded(factorId: "f2", factorType: "totp"))
            #expect(try await storage.confirmFactor(accountId: "a2", factorId: "f2", step: 10, at: Self.t0, events: [added]) == false)
            #expect(try await storage.confirmFactor(accountId: "a1", factorId: "f1", step: 10, at: Self.t0, events: [added]) == false)
            #expect(try await storage.confirmFactor(accountId: "a1", factorId: "f2", step: 10, at: Self.t0, events: [added]))
            #expect(try await storage.confirmFactor(accountId: "a1", factorId: "f2", step: 11, at: Self.t0, events: [added]) == false)
            factors = try await storage.factors(accountId: "a1")
            #expect(factors.first?.demandsSecondFactor == true && factors.first?.lastUsedStep == 10 && factors.first?.lastUsedAt == Self.t0)
            #expect(try await storage.loginLookup(normalizedUserId: "ada@example.org", keys: [], at: Self.t0, window: .seconds(60)).demandsSecondFactor)
            #expect(try await storage.pendingEvents(limit: 100).count == before + 1)
            // The confirming step is used; later steps are not, earlier ones never again. A refused use leaves the
            // wrong answers counted; a step used clears them (its account's only).
            _ = try await storage.countFactorAnswer(accountId: "a1")
            _ = try await storage.countFactorAnswer(accountId: "a2")
            #expect(try await storage.useFactorStep(accountId: "a1", factorId: "f2", step: 10, at: Self.t0) == false)
            #expect(try await storage.useFactorStep(accountId: "a1", factorId: "f2", step: 9, at: Self.t0) == false)
            #expect(try await storage.useFactorStep(accountId: "a2", factorId: "f2", step: 11, at: Self.t0) == false)
            #expect(try await storage.factorAnswers(accountId: "a1") == 1)
            #expect(try await storage.useFactorStep(accountId: "a1", factorId: "f2", step: 11, at: Self.t0))
            #expect(try await storage.factorAnswers(accountId: "a1") == 0)
            #expect(try await storage.factorAnswers(accountId: "a2") == 1)
            #expect(try await storage.useFactorStep(accountId: "a1", factorId: "f2", step: 11, at: Self.t0) == false)
            // A pending enrolment of an account that is gone is refused.
            await #expect(throws: IdentityStorageError.self) { try await storage.addPendingFactor(Self.totp("f3", account: "nobody")) }
        }
    }

    @Test("removing a factor says what it was and how many are left; removing another account's does nothing", arguments: IdentityStorageKind.allCases)
    func removal(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "ada@example.org", sessionByte: 1)
            for id in ["f1", "f2"] {
                try await storage.addPendingFactor(Self.totp(id))
                _ = try await storage.confirmFactor(accountId: "a1", factorId: id, step: 1, at: Self.t0, events: [])
            }
            #expect(try await storage.removeFactor(accountId: "a2", factorId: "f1") { _, _ in [] } == nil)
            #expect(try await storage.removeFactor(accountId: "a1", factorId: "f1") { kind, remaining in
                [Conformance.event("a1", .factorRemoved(factorId: "f1", factorType: kind.rawValue, remaining: remaining))]
            }.map { "\($0.kind) \($0.remaining)" } == "totp 1")
            let events = try await storage.pendingEvents(limit: 100)
            #expect(events.last?.kind == .factorRemoved(factorId: "f1", factorType: "totp", remaining: 1))
            #expect(try await storage.removeFactor(accountId: "a1", factorId: "f1") { _, _ in [] } == nil)
            #expect(try await storage.factors(accountId: "a1").map(\.id) == ["f2"])
        }
    }

    @Test("recovery codes: replaced as a set, each used once, counted down; gone with the account", arguments: IdentityStorageKind.allCases)
    func recoveryCodes(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "ada@example.org", sessionByte: 1)
            let first = (0..<3).map { Conformance.token(UInt8(10 + $0)) }
            try await storage.replaceRecoveryCodes(StoredFactor(id: "r1", accountId: "a1", kind: .recoveryCodes, name: "Recovery codes", confirmed: true, createdAt: Self.t0), codeHashes: first, events: [])
            let second = (0..<3).map { Conformance.token(UInt8(20 + $0)) }
            try await storage.replaceRecoveryCodes(StoredFactor(id: "r2", accountId: "a1", kind: .recoveryCodes, name: "Recovery codes", confirmed: true, createdAt: Self.t0), codeHashes: second, events: [])
            #expect(try await storage.factors(accountId: "a1").map(\.id) == ["r2"])
            #expect(try await storage.factors(accountId: "a1").first?.remaining == 3)
            // The first set stopped working.
            #expect(try await storage.useRecoveryCode(accountId: "a1", codeHash: first[0], at: Self.t0) { _ in [] } == nil)
            #expect(try await storage.useRecoveryCode(accountId: "a2", codeHash: second[0], at: Self.t0) { _ in [] } == nil)
            #expect(try await storage.useRecoveryCode(accountId: "a1", codeHash: second[0], at: Self.t0) { [Conformance.event("a1", .recoveryCodeUsed(remaining: $0))] } == 2)
            #expect(try await storage.useRecoveryCode(accountId: "a1", codeHash: second[0], at: Self.t0) { _ in [] } == nil)
            #expect(try await storage.pendingEvents(limit: 100).last?.kind == .recoveryCodeUsed(remaining: 2))
            let factor = try #require(try await storage.factors(accountId: "a1").first)
            #expect(factor.remaining == 2 && factor.lastUsedAt == Self.t0 && !factor.demandsSecondFactor)
            #expect(try await storage.deleteAccount(accountId: "a1", events: [], profileCleanupAt: Self.t0))
            #expect(try await storage.factors(accountId: "a1").isEmpty)
        }
    }

    @Test("a challenge works once, until it expires, and only under the credential the password was checked for", arguments: IdentityStorageKind.allCases)
    func challenges(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "ada@example.org", sessionByte: 1)
            let challenge = StoredChallenge(tokenHash: Conformance.token(50), accountId: "a1", credentialVersion: 1, expiresAt: Self.t0.adding(.seconds(300)))
            try await storage.createChallenge(challenge)
            #expect(try await storage.answerChallenge(tokenHash: Conformance.token(50), at: Self.t0, allowing: 5) == challenge)
            #expect(try await storage.answerChallenge(tokenHash: Conformance.token(50), at: Self.t0.adding(.seconds(300)), allowing: 5) == nil)
            #expect(try await storage.answerChallenge(tokenHash: Conformance.token(51), at: Self.t0, allowing: 5) == nil)
            var session = Conformance.session("s2", account: "a1", byte: 2)
            session.assuranceLevel = 2
            // Expired: not used.
            #expect(try await storage.completeChallenge(tokenHash: Conformance.token(50), at: Self.t0.adding(.seconds(301)), session: session, events: []) == false)
            #expect(try await storage.completeChallenge(tokenHash: Conformance.token(50), at: Self.t0, session: session, events: [Conformance.event("a1", .associatedAccount)]))
            #expect(try await storage.session(tokenHash: Conformance.token(2))?.assuranceLevel == 2)
            var again = Conformance.session("s3", account: "a1", byte: 3)
            again.assuranceLevel = 2
            #expect(try await storage.completeChallenge(tokenHash: Conformance.token(50), at: Self.t0, session: again, events: []) == false)
            #expect(try await storage.session(tokenHash: Conformance.token(3)) == nil)
            // A credential change since the password was checked: no session from the challenge.
            try await storage.createChallenge(StoredChallenge(tokenHash: Conformance.token(52), accountId: "a1", credentialVersion: 1, expiresAt: Self.t0.adding(.seconds(300))))
            _ = try await storage.changePassword(accountId: "a1", passwordHash: "$argon2id$other", keeping: nil) { _ in [] }
            await #expect(throws: IdentityStorageError.self) {
                try await storage.completeChallenge(tokenHash: Conformance.token(52), at: Self.t0, session: again, events: [])
            }
        }
    }

    @Test("a challenge gives as many answers as it allows; a second factor's answers count until one is right or a reset", arguments: IdentityStorageKind.allCases)
    func answerCounts(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "ada@example.org", sessionByte: 1)
            try await Conformance.account(storage, "a2", "bob@example.org", sessionByte: 2)
            let challenge = StoredChallenge(tokenHash: Conformance.token(60), accountId: "a1", credentialVersion: 1, expiresAt: Self.t0.adding(.seconds(300)))
            try await storage.createChallenge(challenge)
            for _ in 1...3 {
                #expect(try await storage.answerChallenge(tokenHash: Conformance.token(60), at: Self.t0, allowing: 3) == challenge)
            }
            #expect(try await storage.answerChallenge(tokenHash: Conformance.token(60), at: Self.t0, allowing: 3) == nil)
            // More allowed (a configuration raised) gives the next one.
            #expect(try await storage.answerChallenge(tokenHash: Conformance.token(60), at: Self.t0, allowing: 4) == challenge)

            #expect(try await storage.factorAnswers(accountId: "a1") == 0)
            for expected in 1...4 {
                #expect(try await storage.countFactorAnswer(accountId: "a1") == expected)
            }
            #expect(try await storage.countFactorAnswer(accountId: "a2") == 1)
            #expect(try await storage.factorAnswers(accountId: "a1") == 4)
            #expect(try await storage.countFactorAnswer(accountId: "nobody") == nil)
            try await storage.clearFactorAnswers(accountId: "a1")
            #expect(try await storage.factorAnswers(accountId: "a1") == 0)
            #expect(try await storage.factorAnswers(accountId: "a2") == 1)
            // A password reset through the mail opens the factor (the mailbox is proven); another account's stays.
            _ = try await storage.countFactorAnswer(accountId: "a1")
            try await storage.createResetToken(tokenHash: Conformance.token(61), accountId: "a1", expiresAt: Self.t0.adding(.seconds(600)), events: [])
            #expect(try await storage.confirmPasswordReset(tokenHash: Conformance.token(61), at: Self.t0, passwordHash: "$argon2id$new") { _, _ in [] } != nil)
            #expect(try await storage.factorAnswers(accountId: "a1") == 0)
            #expect(try await storage.factorAnswers(accountId: "a2") == 1)
            // Events of their own, in order.
            let before = try await storage.pendingEvents(limit: 1_000).count
            try await storage.appendEvents([Conformance.event("a2", .associatedAccount)])
            #expect(try await storage.pendingEvents(limit: 1_000).count == before + 1)
            // Nothing is left with the account.
            #expect(try await storage.deleteAccount(accountId: "a2", events: [], profileCleanupAt: Self.t0))
            #expect(try await storage.factorAnswers(accountId: "a2") == 0)
        }
    }

    /// Many rounds of several tasks at once, each on the global executor's threads (and, on PostgreSQL, its own
    /// pooled connection): exactly one wins every time.
    @Test("under concurrency a TOTP step, a recovery code and a challenge each work exactly once, answers are counted one by one", arguments: IdentityStorageKind.allCases)
    func races(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "ada@example.org", sessionByte: 1)
            try await storage.addPendingFactor(Self.totp("f1"))
            _ = try await storage.confirmFactor(accountId: "a1", factorId: "f1", step: 0, at: Self.t0, events: [])
            let contenders = 6
            for round in 1...20 {
                let step = Int64(round)
                let stepWins = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<contenders { group.addTask { try await storage.useFactorStep(accountId: "a1", factorId: "f1", step: step, at: Self.t0) } }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(stepWins == 1, "round \(round): the step was accepted \(stepWins) times")

                let code = Conformance.token(UInt8(100 + round))
                try await storage.replaceRecoveryCodes(
                    StoredFactor(id: "r\(round)", accountId: "a1", kind: .recoveryCodes, name: "Recovery codes", confirmed: true, createdAt: Self.t0),
                    codeHashes: [code, Conformance.token(UInt8(200 + round))], events: []
                )
                let codeWins = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<contenders { group.addTask { try await storage.useRecoveryCode(accountId: "a1", codeHash: code, at: Self.t0) { _ in [] } != nil } }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(codeWins == 1, "round \(round): the recovery code was used \(codeWins) times")

                let challengeHash = Conformance.token(UInt8(round))
                try await storage.createChallenge(StoredChallenge(tokenHash: challengeHash, accountId: "a1", credentialVersion: 1, expiresAt: Self.t0.adding(.seconds(300))))
                let sessionWins = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for contender in 0..<contenders {
                        group.addTask {
                            var session = Conformance.session("s-\(round)-\(contender)", account: "a1", byte: 0)
                            session.tokenHash = Array("\(round)-\(contender)".utf8) + [UInt8](repeating: 7, count: 32 - "\(round)-\(contender)".utf8.count)
                            return try await storage.completeChallenge(tokenHash: challengeHash, at: Self.t0, session: session, events: [])
                        }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(sessionWins == 1, "round \(round): the challenge gave \(sessionWins) sessions")

                // Concurrent answers: each takes its own place in the count, and a challenge gives no more than it allows.
                try await storage.clearFactorAnswers(accountId: "a1")
                let counts = try await withThrowingTaskGroup(of: Int?.self) { group in
                    for _ in 0..<contenders { group.addTask { try await storage.countFactorAnswer(accountId: "a1") } }
                    return try await group.reduce(into: [Int?]()) { $0.append($1) }
                }
                #expect(counts.compactMap { $0 }.sorted() == Array(1...contenders), "round \(round): counts \(counts)")
                let answered = Conformance.token(UInt8(150 + round))
                try await storage.createChallenge(StoredChallenge(tokenHash: answered, accountId: "a1", credentialVersion: 1, expiresAt: Self.t0.adding(.seconds(300))))
                let answers = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<contenders { group.addTask { try await storage.answerChallenge(tokenHash: answered, at: Self.t0, allowing: 2) != nil } }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(answers == 2, "round \(round): the challenge gave \(answers) answers")
            }
        }
    }

    static func passkey(_ id: String, account: String = "a1", credentialId: [UInt8], signCount: Int64 = 0) -> StoredFactor {
        StoredFactor(
            id: id, accountId: account, kind: .passkey, name: "Laptop", sealedSecret: [9, 9], confirmed: true, createdAt: t0,
            credentialId: credentialId, signCount: signCount
        )
    }

    @Test("passkeys: found by credential ID across accounts, a credential ID registered once, announced; they demand a second factor", arguments: IdentityStorageKind.allCases)
    func passkeys(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "ada@example.org", sessionByte: 1)
            try await Conformance.account(storage, "a2", "grace@example.org", sessionByte: 2)
            let before = try await storage.pendingEvents(limit: 100).count
            let added = Conformance.event("a1", .factorAdded(factorId: "p1", factorType: "passkey"))
            #expect(try await storage.addPasskey(Self.passkey("p1", credentialId: [1, 2, 3], signCount: 5), events: [added]))
            // The same credential ID for another account (or again): not registered, nothing announced.
            #expect(try await storage.addPasskey(Self.passkey("p2", account: "a2", credentialId: [1, 2, 3]), events: [added]) == false)
            #expect(try await storage.pendingEvents(limit: 100).count == before + 1)
            await #expect(throws: IdentityStorageError.self) { try await storage.addPasskey(Self.passkey("p3", account: "nobody", credentialId: [4]), events: []) }
            let found = try #require(try await storage.passkey(credentialId: [1, 2, 3]))
            #expect(found.id == "p1" && found.accountId == "a1" && found.signCount == 5 && found.sealedSecret == [9, 9] && found.kind == .passkey)
            #expect(try await storage.passkey(credentialId: [1, 2]) == nil)
            let factors = try await storage.factors(accountId: "a1")
            #expect(factors.map(\.credentialId) == [[1, 2, 3]] && factors.allSatisfy(\.demandsSecondFactor))
            #expect(try await storage.loginLookup(normalizedUserId: "ada@example.org", keys: [], at: Self.t0, window: .seconds(60)).demandsSecondFactor)
            // The counter moves only from the value the verification saw, and only for the owner.
            #expect(try await storage.usePasskey(accountId: "a1", factorId: "p1", signCount: 4, newSignCount: 6, at: Self.t0) == false)
            #expect(try await storage.usePasskey(accountId: "a2", factorId: "p1", signCount: 5, newSignCount: 6, at: Self.t0) == false)
            #expect(try await storage.usePasskey(accountId: "a1", factorId: "p1", signCount: 5, newSignCount: 6, at: Self.t0.adding(.seconds(1))))
            let used = try #require(try await storage.passkey(credentialId: [1, 2, 3]))
            #expect(used.signCount == 6 && used.lastUsedAt == Self.t0.adding(.seconds(1)))
            // Removing it: the password alone signs in again; the credential ID is free.
            #expect(try await storage.removeFactor(accountId: "a1", factorId: "p1") { _, _ in [] }.map { "\($0.kind) \($0.remaining)" } == "passkey 0")
            #expect(try await storage.passkey(credentialId: [1, 2, 3]) == nil)
            #expect(try await storage.addPasskey(Self.passkey("p2", account: "a2", credentialId: [1, 2, 3]), events: []))
        }
    }

    @Test("a passkey challenge is used once; expired ones are pruned", arguments: IdentityStorageKind.allCases)
    func passkeyChallenges(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let hash = Conformance.token(42)
            #expect(try await storage.consumePasskeyChallenge(hash: hash, expiresAt: Self.t0.adding(.seconds(300))))
            #expect(try await storage.consumePasskeyChallenge(hash: hash, expiresAt: Self.t0.adding(.seconds(300))) == false)
            _ = try await storage.pruneExpired(at: Self.t0.adding(.seconds(301)), profileCleanupAt: Self.t0, limit: 10) { _ in [] }
            // Pruned once expired (its challenge no longer opens anyway), so the table does not grow.
            #expect(try await storage.consumePasskeyChallenge(hash: hash, expiresAt: Self.t0.adding(.seconds(600))))
        }
    }

    @Test("under concurrency a passkey's counter value and a passkey challenge each work exactly once", arguments: IdentityStorageKind.allCases)
    func passkeyRaces(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            try await Conformance.account(storage, "a1", "ada@example.org", sessionByte: 1)
            #expect(try await storage.addPasskey(Self.passkey("p1", credentialId: [7, 7]), events: []))
            let contenders = 6
            for round in 1...20 {
                let wins = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<contenders {
                        group.addTask { try await storage.usePasskey(accountId: "a1", factorId: "p1", signCount: Int64(round - 1), newSignCount: Int64(round), at: Self.t0) }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(wins == 1, "round \(round): the counter moved \(wins) times")
                let hash = Conformance.token(UInt8(round))
                let used = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for _ in 0..<contenders {
                        group.addTask { try await storage.consumePasskeyChallenge(hash: hash, expiresAt: Self.t0.adding(.seconds(300))) }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(used == 1, "round \(round): the challenge was used \(used) times")
            }
        }
    }
}
