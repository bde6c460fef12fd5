/// An error of the wire layer or a remote handler, identified by a stable code.
///
/// Codes are part of the protocol (they travel in error frames), so callers match on ``code``,
/// never on ``message``. The description never contains secrets: messages are built only from
/// protocol facts, never from configuration.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable, dotted identifier such as `wire.timeout` or `account.credentialsTaken`.
    public var code: String
    /// Human-readable explanation, for logs. Not meant to be parsed.
    public var message: String
    /// Whether the same request may succeed if sent again (possibly to another instance).
    public var isRetryable: Bool
    /// Structured detail for the caller (by convention JSON, e.g. per-field validation errors);
    /// empty for most errors.
    public var details: [UInt8]

    public init(code: String, message: String, isRetryable: Bool = false, details: [UInt8] = []) {
        self.code = code
        self.message = message
        self.isRetryable = isRetryable
        self.details = details
    }

    public var description: String {
        "WireError(code: \(self.code), retryable: \(self.isRetryable), message: \(self.message))"
    }
}

extension WireError {
    /// The codes the wire layer itself produces. Application codes use their own prefix.
    public enum Code {
        public static let frameTooLarge = "wire.frameTooLarge"
        public static let malformedFrame = "wire.malformedFrame"
        public static let unsupportedVersion = "wire.unsupportedVersion"
        public static let authenticationFailed = "wire.authenticationFailed"
        /// The server's welcome did not prove the caller's key: not the service it claims to be, or a relay.
        public static let serverAuthenticationFailed = "wire.serverAuthenticationFailed"
        public static let handshakeRequired = "wire.handshakeRequired"
        public static let unknownMethod = "wire.unknownMethod"
        /// The server's allow-list does not let the calling service call this method.
        public static let forbidden = "wire.forbidden"
        public static let deadlineExceeded = "wire.deadlineExceeded"
        public static let serviceUnavailable = "wire.serviceUnavailable"
        public static let timeout = "wire.timeout"
        public static let shuttingDown = "wire.shuttingDown"
        public static let overloaded = "wire.overloaded"
        public static let connectionClosed = "wire.connectionClosed"
        public static let protocolViolation = "wire.protocolViolation"
        public static let internalError = "wire.internalError"
        public static let badPayload = "wire.badPayload"
        public static let invalidRequest = "wire.invalidRequest"
        public static let cancelled = "wire.cancelled"
    }

    public static func frameTooLarge(_ length: Int, max: Int) -> WireError {
        WireError(code: Code.frameTooLarge, message: "frame length \(length) exceeds maximum \(max)")
    }

    public static func malformedFrame(_ reason: String) -> WireError {
        WireError(code: Code.malformedFrame, message: reason)
    }

    public static func unsupportedVersion(_ version: UInt8) -> WireError {
        WireError(code: Code.unsupportedVersion, message: "unsupported protocol version \(version)")
    }

    public static let authenticationFailed = WireError(
        code: Code.authenticationFailed,
        message: "peer authentication failed"
    )

    public static let serverAuthenticationFailed = WireError(
        code: Code.serverAuthenticationFailed,
        message: "the server did not prove the shared secret"
    )

    public static let handshakeRequired = WireError(
        code: Code.handshakeRequired,
        message: "handshake must complete before any other frame"
    )

    public static func unknownMethod(_ method: String) -> WireError {
        WireError(code: Code.unknownMethod, message: "unknown method '\(method)'")
    }

    public static func forbidden(peer: String, method: String) -> WireError {
        WireError(code: Code.forbidden, message: "'\(peer)' may not call '\(method)'")
    }

    public static let deadlineExceeded = WireError(
        code: Code.deadlineExceeded,
        message: "request deadline exceeded",
        isRetryable: true
    )

    public static func serviceUnavailable(_ reason: String) -> WireError {
        WireError(code: Code.serviceUnavailable, message: reason, isRetryable: true)
    }

    public static let timeout = WireError(code: Code.timeout, message: "request timed out", isRetryable: true)

    public static let shuttingDown = WireError(
        code: Code.shuttingDown,
        message: "peer is shutting down",
        isRetryable: true
    )

    public static let overloaded = WireError(
        code: Code.overloaded,
        message: "too many requests in flight on this connection",
        isRetryable: true
    )

    public static let tooManyConnections = WireError(
        code: Code.overloaded,
        message: "too many connections to this server",
        isRetryable: true
    )

    public static let connectionClosed = WireError(
        code: Code.connectionClosed,
        message: "connection closed before a response arrived",
        isRetryable: true
    )

    /// A request the client refuses to send (an empty or over-long header); nothing was sent.
    public static func invalidRequest(_ reason: String) -> WireError {
        WireError(code: Code.invalidRequest, message: reason)
    }

    /// Sent by a client to cancel one of its requests or subscriptions.
    public static let cancelled = WireError(code: Code.cancelled, message: "cancelled by the client")

    public static func protocolViolation(_ reason: String) -> WireError {
        WireError(code: Code.protocolViolation, message: reason)
    }
}
