import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import Testing

/// A newer provider may add optional fields to its answers: every consumer type decodes every recorded answer with
/// an unknown field added to each of its objects (top level and nested) to the same value as the answer itself.
///
/// The one deliberate exception is an account's details (`details`, and `previous`/`new` of a `detailsChanged`
/// event): they are a map of account keys, not a record, so an added key is an account value, which the consumer
/// keeps and passes on (a deployment's custom keys reach the app without any service knowing them) rather than drops.
/// They decode all the same; the test expects the added key kept there, and nowhere else. An audit entry's `facts`
/// and `personal` are maps of strings (a later version adds keys with string values, which decode), so nothing of
/// another shape is added inside them.
@Suite("Unknown fields in recorded answers")
struct UnknownFieldToleranceTests {
    static let examples: [ContractExample] = {
        let loaded = try? [
            ContractExample.load(service: IdentityContract.serviceName, contractVersion: IdentityContract.version),
            ContractExample.load(service: ProfileContract.serviceName, contractVersion: ProfileContract.version),
            ContractExample.load(service: NotificationsContract.serviceName, contractVersion: NotificationsContract.version),
        ].map(ContractExample.samples(of:))
        return Array((loaded ?? []).joined())
    }()

    static let codecs = IdentityContractConsumerTests.codecs
        .merging(ProfileContractConsumerTests.codecs) { first, _ in first }
        .merging(NotificationsContractConsumerTests.codecs) { first, _ in first }

    /// What a later version might add (a nested value, so that skipping it skips a whole object).
    static var added: [String: Any] { ["addedInALaterVersion": ["note": "unknown to this consumer", "count": 1]] }
    static let accountDetailsMembers: Set<String> = ["details", "previous", "new"]
    static let stringMapMembers: Set<String> = ["facts", "personal"]

    @Test("the examples of every contract are there")
    func loaded() {
        let answered = Self.examples.filter { $0.response != nil }
        #expect(Set(answered.map(\.service)) == [IdentityContract.serviceName, ProfileContract.serviceName, NotificationsContract.serviceName])
        #expect(Set(answered.map(\.method)).count == IdentityContract.methods.count + ProfileContract.methods.count + NotificationsContract.methods.count - 2)
    }

    @Test("every recorded response decodes to the same value with an unknown field in each object", arguments: examples.filter { $0.response != nil })
    func responses(_ example: ContractExample) throws {
        let codec = try #require(Self.codecs[example.method], "no consumer type for \(example.method)")
        let response = try #require(example.response)
        let original = try JSONSerialization.jsonObject(with: Data(response.utf8))
        let doctored = try ContractExample.canonical(Self.adding(to: original, insideAccountDetails: false, everywhere: true))
        #expect(doctored != response, "nothing was added")
        // Decoded as the answer itself, but for the added account keys inside account details.
        let expectedJSON = try JSONSerialization.jsonObject(with: Data(try codec.response(response).utf8))
        let expected = try ContractExample.canonical(Self.adding(to: expectedJSON, insideAccountDetails: false, everywhere: false))
        #expect(try codec.response(doctored) == expected)
    }

    @Test("every recorded error's details decode to the same field errors with an unknown field in each object", arguments: examples.filter { $0.error?.details != nil })
    func errorDetails(_ example: ContractExample) throws {
        let error = try #require(example.error)
        let details = try #require(error.details)
        let doctored = try ContractExample.canonical(Self.adding(to: JSONSerialization.jsonObject(with: Data(details.utf8)), insideAccountDetails: false, everywhere: true))
        func read(_ details: String) -> (fields: [AccountFieldError], retryAfter: Int?) {
            let wire = WireError(code: error.code, message: "m", isRetryable: error.retryable, details: Array(details.utf8))
            if let identity = ServiceError(wire) { return (identity.fields, identity.retryAfterSeconds) }
            return (AccountFieldError.fields(fromWireDetails: wire.details), nil)
        }
        let (fields, retryAfter) = read(details)
        #expect(!fields.isEmpty || retryAfter != nil, "the recorded details say nothing")
        let tolerant = read(doctored)
        #expect(tolerant.fields == fields)
        #expect(tolerant.retryAfter == retryAfter)
    }

    /// `value` with ``added`` in each object: everywhere (what a newer provider sends), or only inside account details
    /// (what a consumer keeps of it).
    static func adding(to value: Any, insideAccountDetails: Bool, everywhere: Bool) -> Any {
        if let object = value as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, member) in object {
                // Only an audit entry's (it has an actor): an account record's `facts` is a record like any other.
                guard !(stringMapMembers.contains(key) && object["actorType"] != nil) else {
                    result[key] = member
                    continue
                }
                result[key] = adding(to: member, insideAccountDetails: insideAccountDetails || accountDetailsMembers.contains(key), everywhere: everywhere)
            }
            if everywhere || insideAccountDetails {
                result.merge(added) { existing, _ in existing }
            }
            return result
        }
        if let array = value as? [Any] {
            return array.map { adding(to: $0, insideAccountDetails: insideAccountDetails, everywhere: everywhere) }
        }
        return value
    }
}
