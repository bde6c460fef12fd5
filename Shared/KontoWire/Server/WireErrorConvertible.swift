/// An application error that should reach the caller with its own stable code.
///
/// A handler that throws such an error produces an error frame with this code, message and
/// retryable flag; the caller receives a ``WireError`` with the same values. Any other error
/// becomes `wire.internalError` with a generic message, so internals never leak to callers.
public protocol WireErrorConvertible: Error {
    var wireErrorCode: KontoErrorCode { get }
    var wireErrorMessage: String { get }
    var wireErrorIsRetryable: Bool { get }
    /// Structured detail for the caller (JSON by convention), e.g. per-field validation errors.
    var wireErrorDetails: [UInt8] { get }
}

extension WireErrorConvertible {
    public var wireErrorIsRetryable: Bool { wireErrorCode.isRetryable }
    public var wireErrorDetails: [UInt8] { [] }
}
