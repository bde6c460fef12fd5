import KontoContracts
import KontoModel
import KontoWire

/// Profile errors reach callers with their code, retryable flag and every field error.
extension ProfileError: WireErrorConvertible {
    public var wireErrorCode: String { code.rawValue }
    public var wireErrorMessage: String { message }
    public var wireErrorIsRetryable: Bool { isRetryable }
    public var wireErrorDetails: [UInt8] { AccountFieldError.wireDetails(fields) }
}
