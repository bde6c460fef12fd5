import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import NIOCore
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `konto-notifications`, `konto-identity` and `konto-profile` as real processes on one PostgreSQL database.
@Suite("konto-notifications process", .timeLimit(.minutes(3)))
struct NotificationsProcessTests {
    typealias Harness = NotificationServiceHarness

    /// Every group's received events by id (with their account and how often each came).
    final class Received: Sendable {
        private let events = Mutex<[String: [UUID: (accountId: String, count: Int)]]>([:])

        func record(_ group: String, _ event: AccountEvent) {
            events.withLock { $0[group, default: [:]][event.id, default: (event.accountId, 0)].count += 1 }
        }

        func events(_ group: String) -> [UUID: (accountId: String, count: Int)] {
            events.withLock { $0[group] ?? [:] }
        }
    }

    final class Accounts: Sendable {
        private let ids = Mutex<Set<String>>([])
        func insert(_ id: String) { ids.withLock { _ = $0.insert(id) } }
        var all: Set<String> { ids.withLock { $0 } }
    }

    /// Consumes `group` until cancelled, subscribing again whenever the subscription ends (Notifications killed).
    static func consume(_ client: WireClient, group: String, into received: Received) async {
        while !Task.isCancelled {
            do {
                let subscription = try await client.subscribe(NotificationsContract.subscribe, NotificationsSubscribeRequest(group: group, types: ["associatedAccount"]), credit: 8)
                for try await delivery in subscription {
                    received.record(group, delivery.event)
                    subscription.acknowledge(delivery)
                }
            } catch {
                // Down or restarting: try again shortly (the client's reconnect backoff paces it too).
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    @Test("SIGKILL while Identity keeps producing: after a restart every event reaches every group, once after deduplication")
    func killedWhileProducing() async throws {
        try await TestDatabase.withFreshDatabase(logger: Harness.logger) { database in
            let ports = (identity: try FreePort.loopback(), profile: try FreePort.loopback(), notifications: try FreePort.loopback())
            let environment = [
                "KONTO_IDENTITY_PORT": "\(ports.identity)",
                "KONTO_PROFILE_PORT": "\(ports.profile)",
                "KONTO_NOTIFICATIONS_PORT": "\(ports.notifications)",
                "KONTO_WIRE_SECRET": Harness.secret,
                "KONTO_LOG_LEVEL": "error",
                "KONTO_IDENTITY_DATABASE_URL": database.url,
                "KONTO_PROFILE_DATABASE_URL": database.url,
                "KONTO_NOTIFICATIONS_DATABASE_URL": database.url,
                "KONTO_NOTIFICATIONS_POLL_MS": "100",
            ]
            let notificationsExecutable = try ServiceProcess.executable(named: "konto-notifications")
            let profile = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-profile"), environment: environment)
            let identity = try ServiceProcess.start(try ServiceProcess.executable(named: "konto-identity"), environment: environment)
            nonisolated(unsafe) var notifications = try ServiceProcess.start(notificationsExecutable, environment: environment)
            do {
                var identityConfiguration = WireClient.Configuration(port: ports.identity, serviceName: WireAllowList.gateway, serverName: IdentityContract.serviceName, secret: WireSecret(Harness.secret))
                identityConfiguration.requestTimeout = .seconds(30)
                let identityClient = WireClient(configuration: identityConfiguration, logger: Harness.logger)
                let consumers = ["operator-consumer.mailer", "operator-consumer.audit"].map { _ in
                    var configuration = WireClient.Configuration(port: ports.notifications, serviceName: "operator-consumer", serverName: NotificationsContract.serviceName, secret: WireSecret(Harness.secret))
                    configuration.backoff.maximum = .milliseconds(200)
                    return WireClient(configuration: configuration, logger: Harness.logger)
                }
                try await RunningServices.with([identityClient] + consumers, logger: Harness.logger) {
                    for group in ["operator-consumer.mailer", "operator-consumer.audit"] {
                        _ = try await Eventually.answer { try await consumers[0].call(NotificationsContract.declareGroup, NotificationsSubscribeRequest(group: group, types: ["associatedAccount"])) }
                    }
                    let received = Received()
                    let signedUp = Accounts()
                    let total = 45
                    try await withThrowingTaskGroup(of: Void.self) { tasks in
                        for (index, group) in ["operator-consumer.mailer", "operator-consumer.audit"].enumerated() {
                            tasks.addTask { await Self.consume(consumers[index], group: group, into: received) }
                        }
                        for number in 0..<total {
                            if number == 15 {
                                notifications.signal(SIGKILL)
                                #expect(await notifications.waitForExit(timeout: .seconds(30)) == 128 + SIGKILL)
                            }
                            if number == 30 {
                                notifications = try ServiceProcess.start(notificationsExecutable, environment: environment)
                            }
                            let account = try await Eventually.answer {
                                try await identityClient.call(IdentityContract.signUp, IdentitySignUpRequest(userId: "user\(number)@example.org", password: SecretString("correct horse battery"), details: AccountDetails(values: ["name": .object(["givenName": .string("User \(number)")])])))
                            }
                            signedUp.insert(account.accountId)
                        }
                        // Every sign-up's associatedAccount event, in each group (the time limit bounds the wait).
                        while ["operator-consumer.mailer", "operator-consumer.audit"].contains(where: { received.events($0).count < total }) {
                            try await Task.sleep(for: .milliseconds(50))
                        }
                        tasks.cancelAll()
                    }
                    for group in ["operator-consumer.mailer", "operator-consumer.audit"] {
                        let events = received.events(group)
                        // Counted, not sampled: one distinct event per sign-up, for exactly the accounts signed up.
                        #expect(events.count == total, "\(group): \(events.count) distinct events of \(total)")
                        #expect(Set(events.values.map(\.accountId)) == signedUp.all)
                    }
                }
                for process in [identity, profile, notifications] {
                    process.signal(SIGTERM)
                    #expect(await process.waitForExit(timeout: .seconds(30)) == 0, "output: \(process.output)")
                }
            } catch {
                for process in [identity, profile, notifications] {
                    await process.stop()
                }
                throw error
            }
            for process in [identity, profile, notifications] {
                await process.stop()
            }
        }
    }
}
