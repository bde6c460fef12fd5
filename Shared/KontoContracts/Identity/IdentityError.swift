import KontoModel
import KontoWire

/// A refused or failed Identity operation, with a stable code and whether retrying may help (from ``ErrorCatalog``).
/// Messages and field errors never carry submitted values: a password cannot leak through an error.
public struct IdentityError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: String
    public let message: String
    public let fields: [AccountFieldError]
    public let isRetryable: Bool

    /// - Parameter isRetryable: by default what ``ErrorCatalog`` declares for the code.
    public init(code: String, message: String, fields: [AccountFieldError] = [], isRetryable: Bool? = nil) {
        self.code = code
        self.message = message
        self.fields = fields
        self.isRetryable = isRetryable ?? ErrorCatalog.isRetryable(code)
    }

    /// The same refusal under its account-model code.
    public init(_ error: AccountError) {
        self.init(code: error.code.rawValue, message: error.message, fields: error.fields)
    }

    public var description: String {
        var text = "\(code): \(message)"
        if isRetryable {
            text += " (retryable)"
        }
        if !fields.isEmpty {
            text += " [" + fields.map(\.description).joined(separator: "; ") + "]"
        }
        return text
    }

    public static let busy = IdentityError(code: IdentityContract.ErrorCode.busy, message: "The service is busy; try again shortly.")
}

extension IdentityError: WireErrorConvertible {
    public var wireErrorCode: String { code }
    public var wireErrorMessage: String { message }
    public var wireErrorIsRetryable: Bool { isRetryable }
    public var wireErrorDetails: [UInt8] { AccountFieldError.wireDetails(fields) }
}
