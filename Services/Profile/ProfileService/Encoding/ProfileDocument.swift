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

    /// Read on every load: the direct parser, not `JSONDecoder` (see `AccountValue(parsingJSON:)`); with `keys`, only
    /// their members are built.
    static func decode(_ bytes: some Collection<UInt8>, keeping keys: [String]? = nil) throws -> [String: AccountValue] {
        guard let keys else { return try AccountValue.parseObject(json: bytes) }
        return try AccountValue.parseObject(json: bytes, keeping: keys)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}
