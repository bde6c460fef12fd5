import Foundation
import IdentityService
import KontoContracts
import KontoTesting
import KontoWire
import Testing

/// The provider side of the Identity contract: a running Identity (with Profile) answers every recorded request
/// exactly as recorded, in order, over the wire, on either storage.
@Suite("Identity contract, provider side")
struct IdentityContractProviderTests {
    /// The examples' throttling threshold is 3 failures.
    static let options: IdentityOptions = {
        var options = IdentityOptions()
        options.throttle = ThrottlePolicy(threshold: 3, baseDelay: .seconds(60))
        return options
    }()

    @Test("the service answers every example as recorded", arguments: IdentityStorageKind.allCases)
    func answersAsRecorded(kind: IdentityStorageKind) async throws {
        let examples = try ContractExample.load(service: "identity", contractVersion: IdentityContract.version)
        let differences = try await IdentityServiceHarness.withServices(kind, options: Self.options) { running in
            try await ContractExample.replay(examples, on: running.identity)
        }
        #expect(differences.isEmpty, "\(differences)")
    }
}
