import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NIOCore
import NotificationService
import ProfileService
import Testing

/// Profile and Notifications: `detailsChanged` out through Profile's outbox, `deletingAccount` in through its group.
@Suite("Profile's events", .timeLimit(.minutes(2)))
struct DeletionConsumerTests {
    typealias Harness = IdentityServiceHarness

    @Test("a modification reaches Notifications as detailsChanged; a deletingAccount event published to Notifications removes the profile", arguments: IdentityStorageKind.allCases)
    func deletes(kind: IdentityStorageKind) async throws {
        let run: @Sendable (PostgresTestDatabase?) async throws -> Void = { database in
            let settings = database.map(Harness.settings)
            let notifications = try OutboxRelayTests.notificationsServer(port: 0, database: settings)
            try await RunningServices.with([notifications], logger: Harness.logger) {
                let notificationsPort = try await notifications.localAddress().port!
                var configuration = ProfileServiceConfiguration(port: 0, secret: WireSecret(Harness.secret), database: settings)
                configuration.notificationsHost = "127.0.0.1"
                configuration.notificationsPort = notificationsPort
                let profile = try ProfileServer(configuration: configuration, logger: Harness.logger)
                try await RunningServices.with([profile], logger: Harness.logger) {
                    let profileClient = Harness.client(port: try await profile.localAddress().port!, as: IdentityContract.serviceName, at: ProfileContract.serviceName)
                    // Each call as the service that makes it: the servers enforce their allow-lists.
                    let profileEditor = Harness.client(port: try await profile.localAddress().port!, as: WireAllowList.gateway, at: ProfileContract.serviceName)
                    let notificationsClient = Harness.client(port: notificationsPort, as: WireAllowList.gateway, at: NotificationsContract.serviceName)
                    let declarer = Harness.client(port: notificationsPort, as: ProfileContract.serviceName, at: NotificationsContract.serviceName)
                    // deletingAccount and passwordChanged are Identity's to publish (EventOwnership).
                    let publisher = Harness.client(port: notificationsPort, as: IdentityContract.serviceName, at: NotificationsContract.serviceName)
                    try await RunningServices.with([profileClient, profileEditor, notificationsClient, declarer, publisher], logger: Harness.logger) {
                        _ = try await profileClient.call(ProfileContract.create, ProfileCreateRequest(accountId: "a1", details: AccountDetails(values: ["userId": .string("leland@stanford.edu"), "name": IdentityFixture.name])))
                        // A modification's detailsChanged goes out through Profile's outbox relay.
                        _ = try await profileEditor.call(ProfileContract.modify, ProfileModifyRequest(accountId: "a1", modifications: AccountModifications(set: AccountDetails(values: ["dateOfBirth": .string("1824-01-01")]))))
                        let changed = try await OutboxRelayTests.feed(notificationsClient, accountId: "a1", count: 1)
                        #expect(changed.first?.kind == .detailsChanged(keys: ["dateOfBirth"]))
                        // The consumer declares its group when it starts, maybe after this publish: declared here too (as
                        // a deployment would, before the first deletion), so the events are queued for it either way.
                        _ = try await declarer.call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: ProfileServer.deletionGroup, types: ["deletingAccount"]))
                        let events = [
                            AccountEvent(accountId: "a1", kind: .deletingAccount),
                            AccountEvent(accountId: "never-had-a-profile", kind: .deletingAccount),
                            AccountEvent(accountId: "a1", kind: .passwordChanged),
                        ]
                        _ = try await publisher.call(NotificationsContract.publish, NotificationsPublishRequest(events: events))
                        // Removed by the consumer (the test time limit bounds the wait).
                        while await wireErrorCode({ try await profileClient.call(ProfileContract.load, ProfileLoadRequest(accountId: "a1")) }) != AccountError.Code.notFound {
                            try await Task.sleep(for: .milliseconds(20))
                        }
                    }
                }
            }
        }
        switch kind {
        case .inMemory:
            try await run(nil)
        case .postgres:
            try await TestDatabase.withFreshDatabase { database in try await run(database) }
        }
    }
}
