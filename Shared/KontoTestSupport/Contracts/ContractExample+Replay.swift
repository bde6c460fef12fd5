import Foundation
import KontoWire
import NIOCore

extension ContractExample {
    /// The provider side of a contract: sends every example's request, in order, to a running service and compares
    /// each answer (response or error) with the recorded one. Returns the differences, each prefixed with its
    /// example's ``label``; empty when the service answers exactly as recorded.
    ///
    /// An example with a `given` condition is sent while that condition holds: `conditions` brings it about before the
    /// example (once for a run of consecutive examples with the same condition) and ends it after. An example whose
    /// condition is not in `conditions` is an error, never skipped here: a provider that cannot have a condition
    /// leaves those examples out itself, saying why.
    public static func replay(
        _ examples: [ContractExample],
        on client: WireClient,
        conditions: [String: ContractCondition] = [:]
    ) async throws -> [String] {
        if let unsupported = examples.first(where: { $0.given.map { conditions[$0] == nil } ?? false }) {
            throw ContractExampleError("\(unsupported.label): the provider test cannot bring about \(unsupported.given ?? "")")
        }
        var bindings = ContractBindings()
        var differences: [String] = []
        var current: String?
        do {
            for example in examples {
                if example.given != current {
                    if let current { try await conditions[current]?.end() }
                    current = nil
                    if let given = example.given, let condition = conditions[given] {
                        try await condition.establish()
                        current = given
                        for (name, value) in try await condition.supply() {
                            try bindings.bind(name, to: value)
                        }
                    }
                }
                differences += try await answer(to: example, on: client, bindings: &bindings).map { "\(example.label): \($0)" }
            }
        } catch {
            if let current { try? await conditions[current]?.end() }
            // An example that cannot be sent (a value an earlier one should have captured) usually follows an earlier
            // answer that differed: say both.
            guard differences.isEmpty else {
                throw ContractExampleError("\(error)\nafter these differences:\n" + differences.joined(separator: "\n"))
            }
            throw error
        }
        if let current { try await conditions[current]?.end() }
        return differences
    }

    /// Sends one example's request and compares the answer.
    private static func answer(to example: ContractExample, on client: WireClient, bindings: inout ContractBindings) async throws -> [String] {
        do {
            let payload = ByteBuffer(string: try example.request(with: bindings))
            let answer: [UInt8]
            if let credit = example.subscriptionCredit {
                answer = try await Self.events(of: example, payload: payload, credit: credit, on: client)
            } else {
                answer = Array(try await client.callRaw(example.method, payload: payload).readableBytesView)
            }
            return try example.mismatches(inResponse: answer, bindings: &bindings)
        } catch let error as WireError {
            let details = error.details.isEmpty ? nil : try canonical(json: error.details)
            let actual = ExpectedError(code: error.code, retryable: error.isRetryable, details: details)
            return try example.mismatches(inError: actual, bindings: &bindings)
        }
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
