import Foundation
import KontoModel

/// The JSON form of an account's stored values: what PostgreSQL keeps as `jsonb` and what size limits measure.
enum ProfileDocument {
    /// Plain JSON, slashes unescaped so sizes are close to what `jsonb` keeps.
    static func encode(_ values: [String: AccountValue]) throws -> Data {
        try encoder.encode(values)
    }

    static func encode(_ value: AccountValue) throws -> Data {
        try encoder.encode(value)
    }

    static func decode(_ data: Data) throws -> [String: AccountValue] {
        try JSONDecoder().decode([String: AccountValue].self, from: data)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}
