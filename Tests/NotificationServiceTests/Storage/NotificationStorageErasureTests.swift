import Foundation
import KontoModel
import KontoTestSupport
@testable import NotificationService
import Testing

/// Erasure of deleted accounts' events and retention, on memory and PostgreSQL alike (issue 28, item 2).
@Suite("Notification storage: erasure and retention")
struct NotificationStorageErasureTests {
    typealias Conformance = NotificationStorageConformanceTests
    static let t0 = Conformance.t0
    /// A grace cutoff long before every deletion: erasure waits for the groups.
    static let patient = t0.adding(.seconds(-86_400))

    /// Events that hold personal data even thin: the addresses a mailer needs.
    static let changed = AccountEvent.Kind.userIdChanged(previous: "erase-me@example.com", new: "erased@example.com")
    static let reset = AccountEvent.Kind.passwordResetRequested(userId: "erase-me@example.com", token: SealedResetToken(box: "sealed"), expiresAt: Date(timeIntervalSince1970: 1_800_000_000))

    /// The types of those of `events` still stored. By id, not through a tail: a tail gives only settled events,
    /// and other tests' transactions on the same cluster hold back what is settled.
    static func remaining(_ storage: any NotificationStorage, _ events: [AccountEvent]) async throws -> [String] {
        var names: [String] = []
        for event in events where try await storage.cursor(ofEvent: event.id, accountId: event.accountId) != nil {
            names.append(event.kind.name)
        }
        return names
    }

    static func drain(_ storage: any NotificationStorage, _ group: String) async throws {
        while true {
            let claimed = try await Conformance.claim(storage, group, limit: 100)
            guard !claimed.isEmpty else { return }
            _ = try await storage.acknowledge(claimed.map(\.claim))
        }
    }

    @Test("a deleted account's events are erased once every group has processed its deletion; later ones by the next sweep", arguments: NotificationStorageKind.allCases)
    func erasedAfterDelivery(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("all", types: nil, at: Self.t0)
            _ = try await storage.ensureGroup("profile", types: ["deletingAccount"], at: Self.t0)
            let other = Conformance.event("keep", Self.changed)
            var gone = [
                Conformance.event("gone", Self.changed),
                Conformance.event("gone", Self.reset),
                Conformance.event("gone", .deletingAccount),
            ]
            _ = try await storage.append([gone[0], gone[1], other, gone[2]], at: Self.t0)
            #expect(try await storage.eraseDeletedAccounts(graceCutoff: Self.patient, limit: 10, at: Self.t0) == 0, "groups have not processed it")
            try await Self.drain(storage, "all")
            #expect(try await storage.eraseDeletedAccounts(graceCutoff: Self.patient, limit: 10, at: Self.t0) == 0, "profile has not processed the deletion")
            #expect(try await Self.remaining(storage, gone) == ["userIdChanged", "passwordResetRequested", "deletingAccount"])
            try await Self.drain(storage, "profile")
            #expect(try await storage.eraseDeletedAccounts(graceCutoff: Self.patient, limit: 10, at: Self.t0) == 1)
            #expect(try await Self.remaining(storage, gone) == ["deletingAccount"])
            #expect(try await Self.remaining(storage, [other]) == ["userIdChanged"])
            #expect(try await storage.eraseDeletedAccounts(graceCutoff: Self.patient, limit: 10, at: Self.t0) == 0, "nothing left to erase")

            // An event that arrives after the erasure (another service's outbox was behind) is erased in turn.
            gone.append(Conformance.event("gone", Self.reset))
            _ = try await storage.append([gone[3]], at: Self.t0)
            #expect(try await storage.eraseDeletedAccounts(graceCutoff: Self.patient, limit: 10, at: Self.t0) == 0, "queued in 'all'")
            try await Self.drain(storage, "all")
            #expect(try await storage.eraseDeletedAccounts(graceCutoff: Self.patient, limit: 10, at: Self.t0) == 1)
            #expect(try await Self.remaining(storage, gone) == ["deletingAccount"])
        }
    }

    @Test("past the grace period an account is erased however far behind a group is, dead letters included", arguments: NotificationStorageKind.allCases)
    func erasedAfterGrace(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("stuck", types: nil, at: Self.t0)
            let gone = [Conformance.event("gone", Self.changed), Conformance.event("gone", .deletingAccount)]
            _ = try await storage.append([gone[0]], at: Self.t0)
            let first = try #require(try await Conformance.claim(storage, "stuck").first)
            #expect(try await storage.reject(first.claim, reason: "mailer down", at: Self.t0))
            _ = try await storage.append([gone[1]], at: Self.t0)
            #expect(try await storage.deadLetters(group: "stuck", limit: 10).count == 1)
            #expect(try await storage.eraseDeletedAccounts(graceCutoff: Self.t0, limit: 10, at: Self.t0) == 0, "within the grace period")
            #expect(try await storage.eraseDeletedAccounts(graceCutoff: Self.t0.adding(.seconds(1)), limit: 10, at: Self.t0) == 1)
            #expect(try await Self.remaining(storage, gone) == ["deletingAccount"])
            #expect(try await storage.deadLetters(group: "stuck", limit: 10).isEmpty)
            // The deletion itself is still delivered.
            #expect(try await Conformance.claim(storage, "stuck").map(\.event.kind) == [.deletingAccount])
        }
    }

    @Test("retention deletes delivered events older than the cutoff, and keeps queued and dead-lettered ones", arguments: NotificationStorageKind.allCases)
    func retention(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            _ = try await storage.ensureGroup("g", types: ["passwordChanged"], at: Self.t0)
            let later = Self.t0.adding(.seconds(2 * 86_400))
            let events = [
                Conformance.event("delivered"), Conformance.event("unqueued", .sessionsRevoked), Conformance.event("dead"),
                Conformance.event("waiting"), Conformance.event("recent", at: later),
            ]
            _ = try await storage.append(events, at: Self.t0)
            let claimed = try await Conformance.claim(storage, "g", limit: 2)
            #expect(claimed.map(\.event.accountId) == ["delivered", "dead"])
            #expect(try await storage.acknowledge(claimed[0].claim))
            #expect(try await storage.reject(claimed[1].claim, reason: "no", at: Self.t0))
            try await storage.logWebhookAttempt(WebhookAttempt(endpoint: "e", eventId: UUID(), attempt: 1, statusCode: 200, error: nil, durationMilliseconds: 1, at: Self.t0))
            try await storage.logWebhookAttempt(WebhookAttempt(endpoint: "e", eventId: UUID(), attempt: 1, statusCode: 200, error: nil, durationMilliseconds: 1, at: later))

            let cutoff = Self.t0.adding(.seconds(86_400))
            #expect(try await storage.prune(before: cutoff, limit: 1) == 1, "the limit holds")
            #expect(try await storage.prune(before: cutoff, limit: 10) == 1)
            #expect(try await storage.prune(before: cutoff, limit: 10) == 0)
            var kept: [String] = []
            for event in events where try await storage.cursor(ofEvent: event.id, accountId: event.accountId) != nil {
                kept.append(event.accountId)
            }
            #expect(kept == ["dead", "waiting", "recent"])
            #expect(try await storage.webhookAttempts(endpoint: "e", limit: 10).map(\.at) == [later])
            // Still claimable and replayable.
            #expect(try await Conformance.claim(storage, "g").map(\.event.accountId) == ["waiting", "recent"])
            #expect(try await storage.replayDeadLetters(group: "g", eventIds: nil, at: Self.t0) == 1)
        }
    }

    @Test("an event stored while its account is being erased is never left behind (real threads, many rounds)", arguments: NotificationStorageKind.allCases)
    func erasureRace(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            for round in 0..<60 {
                let account = "race-\(round)"
                let events = [
                    Conformance.event(account, Self.changed), Conformance.event(account, .deletingAccount),
                    Conformance.event(account, Self.reset),
                ]
                _ = try await storage.append(Array(events.prefix(2)), at: Self.t0)
                async let erase = storage.eraseDeletedAccounts(graceCutoff: Self.patient, limit: 10, at: Self.t0)
                async let late = storage.append([events[2]], at: Self.t0)
                _ = try await (erase, late)
                // Sweeps until nothing is pending: whatever the interleaving, only the deletion remains.
                var sweeps = 0
                while try await storage.eraseDeletedAccounts(graceCutoff: Self.patient, limit: 10, at: Self.t0) > 0 {
                    sweeps += 1
                    try #require(sweeps < 5)
                }
                let remaining = try await Self.remaining(storage, events)
                #expect(remaining == ["deletingAccount"], "round \(round), \(sweeps) more sweeps")
            }
        }
    }
}
