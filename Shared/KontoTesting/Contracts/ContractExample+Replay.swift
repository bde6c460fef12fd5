import Foundation
import KontoWire
import NIOCore

extension ContractExample {
    /// The provider side of a contract: sends every example's request, in order, to a running service and compares
    /// each answer (response or error) with the recorded one. Returns the differences, each prefixed with its
    /// example's name; empty when the service answers exactly as recorded.
    public static func replay(_ examples: [ContractExample], on client: WireClient) async throws -> [String] {
        var bindings = ContractBindings()
        var differences: [String] = []
        for example in examples {
            let found: [String]
            do {
                let payload = ByteBuffer(string: try example.request(with: bindings))
                let answer: [UInt8]
                if let credit = example.subscriptionCredit {
                    answer = try await Self.events(of: example, payload: payload, credit: credit, on: client)
                } else {
                    answer = Array(try await client.callRaw(example.method, payload: payload).readableBytesView)
                }
                found = try example.mismatches(inResponse: answer, bindings: &bindings)
            } catch let error as WireError {
                let details = error.details.isEmpty ? nil : try canonical(json: error.details)
                let actual = ExpectedError(code: error.code, retryable: error.isRetryable, details: details)
                found = try example.mismatches(inError: actual, bindings: &bindings)
            }
            differences += found.map { "\(example.name): \($0)" }
        }
        return differences
    }

    /// Opens the example's subscription and takes as many events as it records (each acknowledged), then cancels
    /// it; the events as `[{"topic", "event"}]`. An error ending the subscription is thrown.
    private static func events(of example: ContractExample, payload: ByteBuffer, credit: Int, on client: WireClient) async throws -> [UInt8] {
        let expected = try example.response.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [Any] ?? [] } ?? []
        let subscription = try await client.subscribeRaw(example.method, payload: payload, credit: credit)
        defer { subscription.cancel() }
        var events: [Any] = []
        var iterator = subscription.makeAsyncIterator()
        // An example with an error expects the subscription to end with it before any event.
        while events.count < max(expected.count, 1) {
            guard let delivery = try await iterator.next() else { break }
            events.append(["topic": delivery.topic, "event": try JSONSerialization.jsonObject(with: Data(delivery.payload.readableBytesView))])
            subscription.acknowledge(delivery)
            if events.count == expected.count { break }
        }
        return Array(try JSONSerialization.data(withJSONObject: events))
    }
}
