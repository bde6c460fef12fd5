import Foundation
import KontoModel
import KontoWire

/// Account errors cross the wire with their code and message, and their per-field errors as the
/// error frame's details: `{"fields":[{"key":…,"code":…,"message":…}]}`.
extension AccountError: WireErrorConvertible {
    public var wireErrorCode: KontoErrorCode { code }
    public var wireErrorMessage: String { message }

    public var wireErrorDetails: [UInt8] {
        AccountFieldError.wireDetails(fields)
    }

    /// The account error a remote service answered with; nil for errors of another family
    /// (`wire.*`, service-specific codes), which callers handle as ``WireError``.
    public init?(_ error: WireError) {
        guard error.code.family == .account else { return nil }
        self.init(code: error.code, message: error.message, fields: AccountFieldError.fields(fromWireDetails: error.details))
    }
}

extension AccountFieldError {
    private struct WireDetails: Codable {
        var fields: [AccountFieldError]
    }

    /// The details of an error frame that carries per-field errors; empty without fields.
    public static func wireDetails(_ fields: [AccountFieldError]) -> [UInt8] {
        guard !fields.isEmpty else { return [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(WireDetails(fields: fields))).map(Array.init) ?? []
    }

    /// The per-field errors in an error frame's details; empty when there are none or they do not decode.
    public static func fields(fromWireDetails details: [UInt8]) -> [AccountFieldError] {
        guard !details.isEmpty else { return [] }
        return (try? JSONDecoder().decode(WireDetails.self, from: Data(details)).fields) ?? []
    }
}
