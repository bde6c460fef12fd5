/// An error frame's body. With correlation id 0 it concerns the whole connection.
public struct WireErrorBody: Sendable, Hashable {
    public var code: String
    public var message: String
    public var isRetryable: Bool

    public init(code: String, message: String, isRetryable: Bool) {
        self.code = code
        self.message = message
        self.isRetryable = isRetryable
    }

    public init(_ error: WireError) {
        self.init(code: error.code, message: error.message, isRetryable: error.isRetryable)
    }

    public var wireError: WireError {
        WireError(code: self.code, message: self.message, isRetryable: self.isRetryable)
    }
}
