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
                let answer = try await client.callRaw(example.method, payload: ByteBuffer(string: try example.request(with: bindings)))
                found = try example.mismatches(inResponse: answer.readableBytesView, bindings: &bindings)
            } catch let error as WireError {
                let details = error.details.isEmpty ? nil : try canonical(json: error.details)
                let actual = ExpectedError(code: error.code, retryable: error.isRetryable, details: details)
                found = try example.mismatches(inError: actual, bindings: &bindings)
            }
            differences += found.map { "\(example.name): \($0)" }
        }
        return differences
    }
}
