import Foundation
@testable import IdentityService
import KontoContracts
import KontoEvents
import KontoModel
import KontoPostgres
import KontoTestSupport
import KontoWire
import NIOCore
import NotificationService
import ProfileService
import Testing

/// Identity's outbox reaching Notifications through the relay, with real services on real sockets.
@Suite("Outbox relay", .timeLimit(.minutes(2)))
struct OutboxRelayTests {
    typealias Harness = IdentityServiceHarness

    static func notificationsServer(port: Int, database: PostgresSettings?) throws -> NotificationServer {
        var options = NotificationOptions()
        options.pollInterval = .milliseconds(100)
        return try NotificationServer(configuration: NotificationServiceConfiguration(port: port, secret: WireSecret(Harness.secret), database: database, options: options), logger: Harness.logger)
    }

    /// One account's events as Notifications stored them, read through its feed until `count` have come.
    static func feed(_ notifications: WireClient, accountId: String, count: Int) async throws -> [AccountEvent] {
        let feed = try await notifications.subscribe(NotificationsContract.feed, NotificationsFeedRequest(accountId: accountId), credit: 16)
        var events: [AccountEvent] = []
        for try await delivery in feed {
            events.append(delivery.event)
            feed.acknowledge(delivery)
            if events.count == count { break }
        }
        feed.cancel()
        return events
    }

    @Test("events written while Notifications is down wait in the outbox and arrive in order once it is up", arguments: IdentityStorageKind.allCases)
    func notificationsDown(kind: IdentityStorageKind) async throws {
        let run: @Sendable (PostgresSettings?) async throws -> Void = { database in
            let profileServer = try ProfileServer(configuration: ProfileServiceConfiguration(port: 0, secret: WireSecret(Harness.secret), database: database), logger: Harness.logger)
            try await RunningServices.with([profileServer], logger: Harness.logger) {
                let notificationsPort = try FreePort.loopback()
                var configuration = Harness.configuration(database: database, profilePort: try await profileServer.localAddress().port!)
                configuration.notificationsHost = "127.0.0.1"
                configuration.notificationsPort = notificationsPort
                let identityServer = try IdentityServer(configuration: configuration, logger: Harness.logger)
                try await RunningServices.with([identityServer], logger: Harness.logger) {
                    let identity = Harness.client(port: try await identityServer.localAddress().port!, as: WireAllowList.gateway)
                    try await RunningServices.with([identity], logger: Harness.logger) {
                        // Nothing listens on the Notifications port yet.
                        let account = try await identity.signUp("leland@stanford.edu")
                        let session = try await identity.login("leland@stanford.edu")
                        _ = try await identity.call(IdentityContract.logout, IdentitySessionRequest(token: session.session.token))
                        let pending = try await identityServer.store.storage.pendingEvents(limit: 10)
                        // Sign-up and login (associatedAccount each), logout (disassociatingAccount).
                        #expect(pending.count >= 3 && pending.first?.kind.name == "associatedAccount")
                        let notifications = try Self.notificationsServer(port: notificationsPort, database: database)
                        try await RunningServices.with([notifications], logger: Harness.logger) {
                            // Listening (after its migrations).
                            _ = try await notifications.localAddress()
                            let client = Harness.client(port: notificationsPort, as: WireAllowList.gateway, at: NotificationsContract.serviceName)
                            try await RunningServices.with([client], logger: Harness.logger) {
                                let stored = try await Self.feed(client, accountId: account.accountId, count: pending.count)
                                #expect(stored.map(\.id) == pending.map(\.id), "the outbox's events, once each, in order")
                                // Published events leave the outbox (removed after Notifications answered).
                                while try await !identityServer.store.storage.pendingEvents(limit: 10).isEmpty {
                                    try await Task.sleep(for: .milliseconds(20))
                                }
                                // New events go out at once now.
                                _ = try await identity.login("leland@stanford.edu")
                                let all = try await Self.feed(client, accountId: account.accountId, count: pending.count + 1)
                                #expect(all.last?.kind.name == "associatedAccount")
                            }
                        }
                    }
                }
            }
        }
        switch kind {
        case .inMemory:
            try await run(nil)
        case .postgres:
            try await TestDatabase.withFreshDatabase { database in try await run(Harness.settings(database)) }
        }
    }

    @Test("a batch published again after its removal failed is stored once", arguments: IdentityStorageKind.allCases)
    func publishedTwice(kind: IdentityStorageKind) async throws {
        try await kind.withStorage { storage in
            let notifications = try Self.notificationsServer(port: 0, database: nil)
            try await RunningServices.with([notifications], logger: Harness.logger) {
                // The relay publishes as Identity; the Gateway reads the feed.
                let client = Harness.client(port: try await notifications.localAddress().port!, as: IdentityContract.serviceName, at: NotificationsContract.serviceName)
                let reader = Harness.client(port: try await notifications.localAddress().port!, as: WireAllowList.gateway, at: NotificationsContract.serviceName)
                try await RunningServices.with([client, reader], logger: Harness.logger) {
                    try await IdentityStorageConformanceTests.account(storage, "a1", "leland@stanford.edu", sessionByte: 1)
                    try await storage.createSession(IdentityStorageConformanceTests.session("s2", account: "a1", byte: 2), events: [IdentityStorageConformanceTests.event("a1", .sessionsRevoked)])
                    let pending = try await storage.pendingEvents(limit: 10)
                    #expect(pending.count == 2)
                    struct RemovalFailed: Error {}
                    // The publish goes through, then the relay dies before removing the batch: the events stay.
                    await #expect(throws: RemovalFailed.self) {
                        _ = try await storage.drainOutbox(limit: 10) { events in
                            _ = try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: events))
                            throw RemovalFailed()
                        }
                    }
                    #expect(try await storage.pendingEvents(limit: 10) == pending)
                    let answers = Answers()
                    #expect(try await storage.drainOutbox(limit: 10) { events in
                        answers.append(try await client.call(NotificationsContract.publish, NotificationsPublishRequest(events: events)))
                    } == 2)
                    #expect(answers.all == [NotificationsPublished(stored: 0, duplicates: 2)])
                    #expect(try await storage.pendingEvents(limit: 10).isEmpty)
                    #expect(try await storage.drainOutbox(limit: 10) { _ in Issue.record("published an empty outbox") } == 0)
                    #expect(try await Self.feed(reader, accountId: "a1", count: 2).map(\.id) == pending.map(\.id))
                }
            }
        }
    }
}

import Synchronization

private final class Answers: Sendable {
    private let answers = Mutex<[NotificationsPublished]>([])
    func append(_ answer: NotificationsPublished) { answers.withLock { $0.append(answer) } }
    var all: [NotificationsPublished] { answers.withLock { $0 } }
}
