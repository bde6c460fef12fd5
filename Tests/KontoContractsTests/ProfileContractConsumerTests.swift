import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import Testing

/// The consumer side of the Profile contract: the Swift types that callers (Identity, the
/// gateway) use encode every recorded request and decode every recorded answer exactly.
@Suite("Profile contract, consumer side")
struct ProfileContractConsumerTests {
    /// With every placeholder replaced by a sample, since the consumer's types read concrete values.
    static let examples: [ContractExample] = (try? ContractExample.samples(of: ContractExample.load(service: "profile", contractVersion: ProfileContract.version))) ?? []

    @Test("the examples are there and cover every method")
    func coverage() {
        #expect(Set(Self.examples.map(\.method)) == Set(ProfileContract.methods))
    }

    @Test("requests and responses round-trip through the contract's types", arguments: examples)
    func roundTrip(_ example: ContractExample) throws {
        let codec = try #require(Self.codecs[example.method], "no contract method \(example.method)")
        if example.consumerProduces {
            #expect(try codec.request(example.request) == example.request)
        } else {
            // The consumer's types drop what they must never send (the password).
            #expect(try codec.request(example.request) != example.request)
        }
        if let response = example.response {
            do {
                #expect(try codec.response(response) == response, "\(example.label): the response does not survive the consumer's type")
            } catch {
                Issue.record("\(example.consumerFailure(reading: "response", error))")
            }
        }
    }

    @Test("every recorded error is one the contract declares, with readable field errors", arguments: examples.filter { $0.error != nil })
    func errors(_ example: ContractExample) throws {
        let error = try #require(example.error)
        #expect(ProfileContract.errorCodesByMethod[example.method]?.contains(error.code) == true, "see ContractCoverageTests")
        if let details = error.details {
            let wire = WireError(code: error.code, message: "m", isRetryable: error.retryable, details: Array(details.utf8))
            let fields = AccountFieldError.fields(fromWireDetails: wire.details)
            #expect(!fields.isEmpty, "details of \(example.name) do not decode as field errors")
        }
    }

    static let codecs: [String: ContractCodec] = Dictionary(uniqueKeysWithValues: [
        ContractCodec.entry(ProfileContract.create),
        ContractCodec.entry(ProfileContract.load),
        ContractCodec.entry(ProfileContract.modify),
        ContractCodec.entry(ProfileContract.delete),
        ContractCodec.entry(HealthContract.check),
    ])
}
