import KontoModel
import KontoWire

/// Profile errors reach callers with their code, retryable flag and every field error.
extension ProfileError: WireErrorConvertible {
    public var wireErrorCode: KontoErrorCode { code }
    public var wireErrorMessage: String { message }
    public var wireErrorIsRetryable: Bool { isRetryable }
    public var wireErrorDetails: [UInt8] { AccountFieldError.wireDetails(fields) }
}

extension ProfileError {
    /// The Profile error a remote Profile service answered with, fields included; nil for other families
    /// (`wire.*`), which callers handle as ``WireError``.
    public init?(_ error: WireError) {
        guard error.code.family == .profile || error.code.family == .account else { return nil }
        self.init(
            code: error.code,
            message: error.message,
            fields: AccountFieldError.fields(fromWireDetails: error.details),
            isRetryable: error.isRetryable
        )
    }
}
