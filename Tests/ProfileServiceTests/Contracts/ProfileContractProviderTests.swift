import Foundation
import KontoContracts
import KontoPostgres
import KontoTestSupport
import KontoWire
import ProfileService
import Testing

/// The provider side of the Profile contract: a running service answers every recorded request
/// exactly as recorded, in order, over the wire, on either storage.
@Suite("Profile contract, provider side", .timeLimit(.minutes(5)))
struct ProfileContractProviderTests {
    /// The limits the examples are recorded with: small, so that the limit examples stay readable.
    static let store = ProfileStoreOptions(limits: ProfileLimits(maximumValueBytes: 256, maximumAccountBytes: 400))

    @Test("on PostgreSQL, the service answers every example as recorded, its database stopped or broken where an example says")
    func answersAsRecordedOnPostgres() async throws {
        let examples = try ContractExample.load(service: ProfileContract.serviceName, contractVersion: ProfileContract.version)
        let accounts = try ProfileServiceHarness.contractAccounts()
        // A server of its own: the examples stop it.
        let differences = try await ContractCondition.withDedicatedDatabase { cluster, database in
            try await ProfileServiceHarness.run(database: PostgresSettings(database), accounts: accounts, store: Self.store) { client, _ in
                try await ContractExample.replay(examples, on: client, conditions: [
                    ContractCondition.storageDown: .storageDown(cluster, health: client),
                    ContractCondition.storageBroken: .storageBroken(database, schema: "profile"),
                ])
            }
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }

    @Test("in memory, the service answers every example as recorded, but for those of a database stopped or broken")
    func answersAsRecordedInMemory() async throws {
        // Memory cannot be stopped or lose its tables: those examples are PostgreSQL's alone.
        let examples = try ContractExample.load(service: ProfileContract.serviceName, contractVersion: ProfileContract.version)
            .filter { !ContractCondition.storageConditions.contains($0.given ?? "") }
        let accounts = try ProfileServiceHarness.contractAccounts()
        let differences = try await ProfileServiceHarness.run(database: nil, accounts: accounts, store: Self.store) { client, _ in
            try await ContractExample.replay(examples, on: client)
        }
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }
}

extension PostgresSettings {
    init(_ database: PostgresTestDatabase) {
        self.init(host: database.host, port: database.port, username: database.username, password: database.password, database: database.database)
    }
}
