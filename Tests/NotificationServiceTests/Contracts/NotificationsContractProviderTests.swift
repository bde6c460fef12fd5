import Foundation
import KontoContracts
import KontoPostgres
import KontoTestSupport
import NotificationService
import Testing

/// The provider side of the Notifications contract: a running Notifications answers every recorded request, and
/// delivers every recorded subscription's events, exactly as recorded, in order, over the wire, on either storage.
@Suite("Notifications contract, provider side", .timeLimit(.minutes(5)))
struct NotificationsContractProviderTests {
    /// The deployment file's endpoint the examples list (and may not remove); no example publishes its one type.
    /// Two endpoints through the API at most, so an example can meet the limit (15ma).
    static let configure: @Sendable (inout NotificationServiceConfiguration) -> Void = { $0.maxStoredWebhooks = 2 }

    static let fileEndpoint = WebhookEndpoint(
        name: "mailer", url: URL(string: "http://user:password@127.0.0.1:9/mail?key=receivers")!, secret: "whsec_a29udG8td2ViaG9vay10ZXN0cy1zZWNyZXQtMDEyMzQ1Njc4OQ==",
        types: ["accountEnabled"], insecure: true
    )

    @Test("on PostgreSQL, the service answers every example as recorded, its database stopped or broken where an example says")
    func answersAsRecordedOnPostgres() async throws {
        let examples = try ContractExample.load(service: NotificationsContract.serviceName, contractVersion: NotificationsContract.version)
        // A server of its own: the examples stop it.
        let differences = try await ContractCondition.withDedicatedDatabase { cluster, database in
            let settings = PostgresSettings(host: database.host, port: database.port, username: database.username, password: database.password, database: database.database)
            return try await NotificationServiceHarness.run(database: settings, options: NotificationServiceHarness.quickOptions, webhooks: [Self.fileEndpoint], configure: Self.configure) { running in
                let client = running.client()
                return try await NotificationServiceHarness.with(client) {
                    try await ContractExample.replay(examples, on: client, conditions: [
                        ContractCondition.storageDown: .storageDown(cluster, health: client),
                        ContractCondition.storageBroken: .storageBroken(database, schema: "notifications"),
                    ])
                }
            }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }

    @Test("in memory, the service answers every example as recorded, but for those of a database stopped or broken")
    func answersAsRecordedInMemory() async throws {
        // Memory cannot be stopped or lose its tables: those examples are PostgreSQL's alone.
        let examples = try ContractExample.load(service: NotificationsContract.serviceName, contractVersion: NotificationsContract.version)
            .filter { !ContractCondition.storageConditions.contains($0.given ?? "") }
        let differences = try await NotificationServiceHarness.run(database: nil, options: NotificationServiceHarness.quickOptions, webhooks: [Self.fileEndpoint], configure: Self.configure) { running in
            let client = running.client()
            return try await NotificationServiceHarness.with(client) {
                try await ContractExample.replay(examples, on: client)
            }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }
}
