import OpenAPIRuntime

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RFC 3339 times read with or without fractional seconds (the runtime's ``ISO8601DateTranscoder`` takes one form
/// only, and a gateway may send either); written without, as the gateway does.
struct RFC3339DateTranscoder: DateTranscoder {
    func encode(_ date: Date) throws -> String {
        date.formatted(.iso8601)
    }

    func decode(_ text: String) throws -> Date {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return date }
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not an RFC 3339 time: \(text.prefix(64))"))
    }
}
