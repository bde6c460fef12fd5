import Foundation
import KontoModel
import KontoTestSupport
@testable import NotificationService
import Testing

/// What every ``NotificationStorage`` must do for cache-holding tail readers (`notifications.tailBarrier`), on memory
/// and PostgreSQL alike.
@Suite("Tail readers in storage")
struct TailReaderStorageTests {
    static let t0 = NotificationStorageConformanceTests.t0
    static let lease = Duration.seconds(5)

    static func event(_ accountId: String, _ kind: AccountEvent.Kind = .sessionsRevoked) -> AccountEvent {
        NotificationStorageConformanceTests.event(accountId, kind)
    }

    /// The reader's events as its tail gives them, once settled.
    static func tailed(_ storage: any NotificationStorage, after cursor: TailCursor, count: Int) async throws -> [TailedEvent] {
        try await NotificationStorageConformanceTests.tail(storage, after: cursor, count: count)
    }

    @Test("a reader is behind on an event its tail gives until it acknowledges it, never on one stored before it started", arguments: NotificationStorageKind.allCases)
    func behindUntilAcknowledged(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            let before = Self.event("a0")
            _ = try await storage.append([before], at: Self.t0)
            let reader = UUID()
            let start = try await storage.tailCursor()
            try await storage.registerTailReader(reader, start: start, leaseUntil: Self.t0.adding(Self.lease), at: Self.t0)
            #expect(try await storage.liveTailReaders(at: Self.t0) == [reader])
            // Stored before the reader's tail started: it never gets it, and read what came after.
            #expect(try await storage.tailReadersBehind([reader], eventIds: [before.id], at: Self.t0) == 0)

            let first = Self.event("a1")
            let second = Self.event("a2", .disassociatingAccount)
            _ = try await storage.append([first], at: Self.t0)
            _ = try await storage.append([second], at: Self.t0)
            // Not stored yet: nil, whatever the readers did.
            let unknown = UUID()
            #expect(try await storage.tailReadersBehind([reader], eventIds: [first.id, unknown], at: Self.t0) == nil)
            #expect(try await storage.tailReadersBehind([reader], eventIds: [first.id, second.id], at: Self.t0) == 1)

            let tailed = try await Self.tailed(storage, after: start, count: 2)
            #expect(tailed.map(\.event) == [first, second])
            // The first acknowledged: behind on the second alone.
            #expect(try await storage.renewTailReader(reader, acknowledged: tailed[0].cursor, leaseUntil: Self.t0.adding(Self.lease), at: Self.t0))
            #expect(try await storage.tailReadersBehind([reader], eventIds: [first.id], at: Self.t0) == 0)
            #expect(try await storage.tailReadersBehind([reader], eventIds: [first.id, second.id], at: Self.t0) == 1)
            // Both.
            #expect(try await storage.renewTailReader(reader, acknowledged: tailed[1].cursor, leaseUntil: Self.t0.adding(Self.lease), at: Self.t0))
            #expect(try await storage.tailReadersBehind([reader], eventIds: [first.id, second.id], at: Self.t0) == 0)
            // An acknowledgement never moves back, and a renewal without one keeps it.
            #expect(try await storage.renewTailReader(reader, acknowledged: tailed[0].cursor, leaseUntil: Self.t0.adding(Self.lease), at: Self.t0))
            #expect(try await storage.renewTailReader(reader, acknowledged: nil, leaseUntil: Self.t0.adding(Self.lease), at: Self.t0))
            #expect(try await storage.tailReadersBehind([reader], eventIds: [second.id], at: Self.t0) == 0)

            // A reader that starts after the events is behind on none of them.
            let late = UUID()
            try await storage.registerTailReader(late, start: try await storage.tailCursor(), leaseUntil: Self.t0.adding(Self.lease), at: Self.t0)
            #expect(try await storage.tailReadersBehind([reader, late], eventIds: [first.id, second.id], at: Self.t0) == 0)
            let third = Self.event("a3")
            _ = try await storage.append([third], at: Self.t0)
            #expect(try await storage.tailReadersBehind([reader, late], eventIds: [third.id], at: Self.t0) == 2)
            // Duplicated ids count once.
            #expect(try await storage.tailReadersBehind([reader, late], eventIds: [third.id, third.id], at: Self.t0) == 2)
        }
    }

    @Test("a lease that ended stops the reader counting, cannot be renewed, and is forgotten at the next registration", arguments: NotificationStorageKind.allCases)
    func leases(kind: NotificationStorageKind) async throws {
        try await kind.withStorage { storage async throws in
            let (short, long) = (UUID(), UUID())
            let start = try await storage.tailCursor()
            try await storage.registerTailReader(short, start: start, leaseUntil: Self.t0.adding(.seconds(1)), at: Self.t0)
            try await storage.registerTailReader(long, start: start, leaseUntil: Self.t0.adding(.seconds(10)), at: Self.t0)
            let event = Self.event("a1")
            _ = try await storage.append([event], at: Self.t0)
            let later = Self.t0.adding(.seconds(2))
            #expect(Set(try await storage.liveTailReaders(at: Self.t0)) == [short, long])
            #expect(try await storage.liveTailReaders(at: later) == [long])
            #expect(try await storage.tailReadersBehind([short, long], eventIds: [event.id], at: Self.t0) == 2)
            #expect(try await storage.tailReadersBehind([short, long], eventIds: [event.id], at: later) == 1)
            // The short lease ended: a barrier may have stopped waiting for it, so it is not renewed.
            #expect(try await !storage.renewTailReader(short, acknowledged: nil, leaseUntil: later.adding(.seconds(5)), at: later))
            #expect(try await storage.renewTailReader(long, acknowledged: nil, leaseUntil: later.adding(.seconds(5)), at: later))
            // An unknown reader is not renewed either.
            #expect(try await !storage.renewTailReader(UUID(), acknowledged: nil, leaseUntil: later.adding(.seconds(5)), at: later))
            // Removing a reader: it no longer counts.
            try await storage.removeTailReader(long)
            #expect(try await storage.liveTailReaders(at: later).isEmpty)
            #expect(try await storage.tailReadersBehind([short, long], eventIds: [event.id], at: Self.t0) == 1)
            // A registration forgets the readers whose lease ended before it.
            try await storage.registerTailReader(UUID(), start: try await storage.tailCursor(), leaseUntil: later.adding(.seconds(5)), at: later)
            #expect(try await storage.tailReadersBehind([short], eventIds: [event.id], at: Self.t0) == 0)
        }
    }
}
