import Foundation
import KontoContracts
import KontoTesting
import KontoWire
import NIOCore
import ProfileService
import Testing

/// The provider side of the Profile contract: a running service answers every recorded request
/// exactly as recorded, in order, over the wire, on either storage.
@Suite("Profile contract, provider side")
struct ProfileContractProviderTests {
    @Test("the service answers every example as recorded", arguments: StorageKind.allCases)
    func answersAsRecorded(storage: StorageKind) async throws {
        let examples = try ContractExample.load(service: "profile")
        let accounts = try ProfileServiceHarness.contractAccounts()
        try await ProfileServiceHarness.withService(storage: storage, accounts: accounts) { client, _ in
            var bindings = ContractBindings()
            for example in examples {
                do {
                    let answer = try await client.callRaw(example.method, payload: ByteBuffer(string: try example.request(with: bindings)))
                    let differences = try example.mismatches(inResponse: answer.readableBytesView, bindings: &bindings)
                    #expect(differences.isEmpty, "\(example.name): \(differences)")
                } catch let error as WireError {
                    let details = error.details.isEmpty ? nil : try ContractExample.canonical(json: error.details)
                    let actual = ContractExample.ExpectedError(code: error.code, retryable: error.isRetryable, details: details)
                    let differences = try example.mismatches(inError: actual, bindings: &bindings)
                    #expect(differences.isEmpty, "\(example.name): \(differences)")
                }
            }
        }
    }
}
