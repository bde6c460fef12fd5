/// An error frame's body. With correlation id 0 it concerns the whole connection.
public struct WireErrorBody: Sendable, Hashable {
    public var code: KontoErrorCode
    public var message: String
    public var isRetryable: Bool
    /// Opaque structured detail (JSON by convention); empty when there is none.
    public var details: [UInt8]

    public init(code: KontoErrorCode, message: String, isRetryable: Bool, details: [UInt8] = []) {
        self.code = code
        self.message = message
        self.isRetryable = isRetryable
        self.details = details
    }

    public init(_ error: WireError) {
        self.init(code: error.code, message: error.message, isRetryable: error.isRetryable, details: error.details)
    }

    public var wireError: WireError {
        WireError(code: self.code, message: self.message, isRetryable: self.isRetryable, details: self.details)
    }
}
