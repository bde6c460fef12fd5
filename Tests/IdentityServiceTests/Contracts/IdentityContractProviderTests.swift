import Foundation
import IdentityService
import KontoContracts
import KontoTesting
import KontoWire
import NIOCore
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
        let examples = try ContractExample.load(service: "identity")
        try await IdentityServiceHarness.withServices(kind, options: Self.options) { running in
            var bindings = ContractBindings()
            for example in examples {
                do {
                    let answer = try await running.identity.callRaw(example.method, payload: ByteBuffer(string: try example.request(with: bindings)))
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
