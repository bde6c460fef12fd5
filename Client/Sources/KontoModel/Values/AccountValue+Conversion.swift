import Foundation

extension AccountValue {
    /// Converts a typed value into its stored form through its `Codable` conformance.
    ///
    /// `Date`s become ISO 8601 strings so that a key typed as `Date` stays readable on the wire.
    public init<Value: Encodable>(encoding value: Value) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(value)
        self = try JSONDecoder().decode(AccountValue.self, from: data)
    }

    /// Converts the stored form back into a typed value.
    public func decode<Value: Decodable>(as type: Value.Type = Value.self) throws -> Value {
        let data = try JSONEncoder().encode(self)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(Value.self, from: data)
    }

    /// The string payload, if this is a string.
    public var stringValue: String? {
        if case let .string(value) = self { value } else { nil }
    }
}
