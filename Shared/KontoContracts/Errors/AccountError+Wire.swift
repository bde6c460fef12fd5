import Foundation
import KontoModel
import KontoWire

/// Account errors cross the wire with their code and message, and their per-field errors as the
/// error frame's details: `{"fields":[{"key":…,"code":…,"message":…}]}`.
extension AccountError: WireErrorConvertible {
    public var wireErrorCode: String { code.rawValue }
    public var wireErrorMessage: String { message }

    public var wireErrorDetails: [UInt8] {
        guard !fields.isEmpty, let data = try? Self.detailsEncoder.encode(WireDetails(fields: fields)) else { return [] }
        return Array(data)
    }

    /// The account error a remote service answered with; nil for errors of another family
    /// (`wire.*`, service-specific codes), which callers handle as ``WireError``.
    public init?(_ error: WireError) {
        guard error.code.hasPrefix("account.") else { return nil }
        let fields = error.details.isEmpty
            ? []
            : (try? JSONDecoder().decode(WireDetails.self, from: Data(error.details)).fields) ?? []
        self.init(code: Code(rawValue: error.code), message: error.message, fields: fields)
    }

    private struct WireDetails: Codable {
        var fields: [AccountFieldError]
    }

    private static let detailsEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
}
