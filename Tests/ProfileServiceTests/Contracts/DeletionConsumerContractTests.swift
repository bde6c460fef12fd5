import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NIOCore
import ProfileService
import Synchronization
import Testing

/// Profile's deletion consumer as a consumer of the Notifications contract: against a stand-in Notifications that
/// answers from the recorded examples of its group, it declares the group and subscribes with exactly the recorded
/// requests, and reads the recorded `deletingAccount` event: it deletes the account's profile and acknowledges it.
@Suite("Profile's deletion consumer, consumer side of the Notifications contract", .timeLimit(.minutes(2)))
struct DeletionConsumerContractTests {
    @Test("the recorded declaration and subscription of profile.deletions, and the recorded deletion handled")
    func replay() async throws {
        let examples = try ContractExample.samples(of: ContractExample.load(service: NotificationsContract.serviceName, contractVersion: NotificationsContract.version))
        let group = ProfileServer.deletionGroup
        func recorded(_ method: String) throws -> ContractExample {
            try #require(examples.first { example in
                example.method == method && example.error == nil && example.given == nil && example.request.contains("\"group\":\"\(group)\"")
            }, "no recorded \(method) of \(group)")
        }
        let declaration = try recorded(NotificationsContract.declareGroup.name)
        let subscription = try recorded(NotificationsContract.subscribe.name)
        let events = try #require(subscription.response)
        let recordedDeliveries = try #require(try JSONSerialization.jsonObject(with: Data(events.utf8)) as? [[String: Any]])
        // As the stand-in pushes them: the topic and the event's JSON.
        let deliveries: [(topic: String, event: [UInt8])] = try recordedDeliveries.map { delivery in
            (delivery["topic"] as? String ?? "", Array(try JSONSerialization.data(withJSONObject: delivery["event"] ?? [:])))
        }
        let accountIds = recordedDeliveries.compactMap { ($0["event"] as? [String: Any])?["accountId"] as? String }
        #expect(!accountIds.isEmpty)

        let received = Mutex<[String: [String]]>([:])
        let (go, start) = AsyncStream<Void>.makeStream()
        let (outcomes, outcome) = AsyncStream<WireDeliveryOutcome>.makeStream()
        let notifications = WireServer(
            configuration: WireServer.Configuration(port: 0, serverName: NotificationsContract.serviceName, secret: WireSecret(ProfileServiceHarness.secret)),
            logger: ProfileServiceHarness.logger
        )
        @Sendable func record(_ method: String, _ payload: ByteBuffer) {
            let request = (try? ContractExample.canonical(json: payload.readableBytesView)) ?? "unreadable"
            received.withLock { $0[method, default: []].append(request) }
        }
        notifications.registerRaw(NotificationsContract.declareGroup.name) { payload, _ in
            record(NotificationsContract.declareGroup.name, payload)
            return ByteBuffer(string: declaration.response ?? "")
        }
        notifications.registerRawSubscription(NotificationsContract.subscribe.name) { payload, _, wire in
            record(NotificationsContract.subscribe.name, payload)
            // The recorded events, once the test has made the profiles they delete.
            for await _ in go { break }
            for delivery in deliveries {
                _ = try await wire.push(topic: delivery.topic, payload: ByteBuffer(bytes: delivery.event))
            }
            for await settled in wire.outcomes {
                outcome.yield(settled)
            }
        }
        try await RunningServices.with([notifications], logger: ProfileServiceHarness.logger) {
            var configuration = ProfileServiceConfiguration(port: 0, secret: WireSecret(ProfileServiceHarness.secret), accounts: try ProfileServiceHarness.contractAccounts())
            configuration.notificationsHost = "127.0.0.1"
            configuration.notificationsPort = try await notifications.localAddress().port!
            let profile = try ProfileServer(configuration: configuration, logger: ProfileServiceHarness.logger)
            try await RunningServices.with([profile], logger: ProfileServiceHarness.logger) {
                let client = WireClient(
                    configuration: WireClient.Configuration(port: try await profile.localAddress().port!, serviceName: IdentityContract.serviceName, serverName: ProfileContract.serviceName, secret: WireSecret(ProfileServiceHarness.secret)),
                    logger: ProfileServiceHarness.logger
                )
                try await RunningServices.with([client], logger: ProfileServiceHarness.logger) {
                    for accountId in accountIds {
                        let details = AccountDetails(values: ["name": .object(["givenName": .string("Doomed")])])
                        _ = try await client.call(ProfileContract.create, ProfileCreateRequest(accountId: accountId, details: details))
                    }
                    start.yield()
                    var settled: [WireDeliveryOutcome] = []
                    for await next in outcomes {
                        settled.append(next)
                        if settled.count == deliveries.count { break }
                    }
                    #expect(settled.count == deliveries.count)
                    #expect(settled.map(\.disposition) == Array(repeating: WireAck.Disposition.processed, count: settled.count))
                    for accountId in accountIds {
                        let error = await #expect(throws: WireError.self) {
                            try await client.call(ProfileContract.load, ProfileLoadRequest(accountId: accountId))
                        }
                        #expect(error?.code == AccountError.Code.notFound, "\(accountId) was not deleted")
                    }
                }
            }
        }
        let requests = received.withLock { $0 }
        #expect(requests[NotificationsContract.declareGroup.name] == [declaration.request])
        #expect(requests[NotificationsContract.subscribe.name] == [subscription.request])
    }
}
