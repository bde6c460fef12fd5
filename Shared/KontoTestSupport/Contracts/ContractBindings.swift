import Foundation

/// The values captured while a provider replays examples in order (`$capture:NAME:KIND`), for the `$ref:NAME`
/// placeholders of later examples. See ``ContractPlaceholder``.
public struct ContractBindings: Sendable {
    /// Canonical JSON of each captured value.
    public private(set) var values: [String: String] = [:]

    public init() {}

    mutating func bind(_ name: String, to value: Any) throws {
        values[name] = try ContractExample.canonical(value)
    }

    func value(of name: String, in example: String) throws -> Any {
        guard let json = values[name] else {
            throw ContractExampleError("\(example): \(name) used before an example captured it or a condition supplied it")
        }
        return try JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
    }
}
