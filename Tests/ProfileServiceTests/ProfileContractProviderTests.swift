import Foundation
import KontoContracts
import KontoTesting
import KontoWire
import ProfileService
import Testing

/// The provider side of the Profile contract: a running service answers every recorded request
/// exactly as recorded, in order, over the wire, on either storage.
@Suite("Profile contract, provider side")
struct ProfileContractProviderTests {
    @Test("the service answers every example as recorded", arguments: StorageKind.allCases)
    func answersAsRecorded(storage: StorageKind) async throws {
        let examples = try ContractExample.load(service: "profile", contractVersion: ProfileContract.version)
        let accounts = try ProfileServiceHarness.contractAccounts()
        let differences = try await ProfileServiceHarness.withService(storage: storage, accounts: accounts) { client, _ in
            try await ContractExample.replay(examples, on: client)
        }
        #expect(differences.isEmpty, "\(differences)")
    }
}
