import Foundation
import KontoContracts
import KontoModel
import KontoTestSupport
import KontoWire
import Testing

/// The consumer side of the Notifications contract: the Swift types producers and consumers use encode every
/// recorded request and decode every recorded answer and delivered event without losing or adding anything.
@Suite("Notifications contract, consumer side")
struct NotificationsContractConsumerTests {
    static let loaded = Result { try ContractExample.samples(of: ContractExample.load(service: "notifications", contractVersion: NotificationsContract.version)) }
    static let examples: [ContractExample] = (try? loaded.get()) ?? []

    @Test("the examples load")
    func load() throws {
        _ = try Self.loaded.get()
    }

    @Test("the examples cover every method, and the subscriptions are recorded as subscriptions")
    func coverage() {
        #expect(Set(Self.examples.map(\.method)) == Set(NotificationsContract.methods))
        let subscriptions: Set<String> = [NotificationsContract.subscribe.name, NotificationsContract.feed.name, NotificationsContract.tail.name]
        for example in Self.examples {
            #expect((example.subscriptionCredit != nil) == subscriptions.contains(example.method), "\(example.name)")
        }
    }

    @Test("requests, responses and delivered events round-trip through the contract's types", arguments: examples)
    func roundTrip(_ example: ContractExample) throws {
        let codec = try #require(Self.codecs[example.method], "no contract method \(example.method)")
        #expect(try codec.request(example.request) == example.request)
        if let response = example.response {
            do {
                #expect(try codec.response(response) == response, "\(example.label): the response does not survive the consumer's type")
            } catch {
                Issue.record("\(example.consumerFailure(reading: "response", error))")
            }
        }
    }

    @Test("every recorded error is one the contract declares, and reads back as a ServiceError", arguments: examples.filter { $0.error != nil })
    func errors(_ example: ContractExample) throws {
        let error = try #require(example.error)
        #expect(NotificationsContract.errorCodesByMethod[example.method]?.contains(error.code) == true, "see ContractCoverageTests")
        let notifications = try #require(ServiceError(WireError(code: error.code, message: "m", isRetryable: error.retryable)))
        #expect(notifications.isRetryable == error.retryable)
    }

    static let codecs: [String: ContractCodec] = Dictionary(uniqueKeysWithValues: [
        ContractCodec.entry(NotificationsContract.publish),
        ContractCodec.entry(NotificationsContract.declareGroup),
        ContractCodec.entry(subscription: NotificationsContract.subscribe),
        ContractCodec.entry(subscription: NotificationsContract.feed),
        ContractCodec.entry(NotificationsContract.accountHistory),
        ContractCodec.entry(NotificationsContract.tailCursor),
        ContractCodec.entry(subscription: NotificationsContract.tail),
        ContractCodec.entry(NotificationsContract.tailBarrier),
        ContractCodec.entry(NotificationsContract.deadLetters),
        ContractCodec.entry(NotificationsContract.replayDeadLetters),
        ContractCodec.entry(NotificationsContract.replay),
        ContractCodec.entry(NotificationsContract.failedDeliveries),
        ContractCodec.entry(NotificationsContract.redeliver),
        ContractCodec.entry(NotificationsContract.webhookEndpoints),
        ContractCodec.entry(NotificationsContract.addWebhookEndpoint),
        ContractCodec.entry(NotificationsContract.removeWebhookEndpoint),
        ContractCodec.entry(HealthContract.check),
    ])
}
