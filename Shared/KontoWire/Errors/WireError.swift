@_exported import KontoErrors

/// An error of the wire layer or a remote handler, identified by a stable code.
///
/// Codes are part of the protocol (they travel in error frames), so callers match on ``code``,
/// never on ``message``. The description never contains secrets: messages are built only from
/// protocol facts, never from configuration.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Stable, dotted identifier such as `wire.timeout` or `account.credentialsTaken`.
    public var code: KontoErrorCode
    /// Human-readable explanation, for logs. Not meant to be parsed.
    public var message: String
    /// Whether the same request may succeed if sent again (possibly to another instance): as the answer said, which
    /// is the code's own unless the answer says otherwise.
    public var isRetryable: Bool
    /// Structured detail for the caller (by convention JSON, e.g. per-field validation errors);
    /// empty for most errors.
    public var details: [UInt8]

    /// - Parameter isRetryable: by default the code's (``KontoErrorCode/isRetryable``).
    public init(code: KontoErrorCode, message: String, isRetryable: Bool? = nil, details: [UInt8] = []) {
        self.code = code
        self.message = message
        self.isRetryable = isRetryable ?? code.isRetryable
        self.details = details
    }

    public var description: String {
        "WireError(code: \(self.code), retryable: \(self.isRetryable), message: \(self.message))"
    }
}

extension WireError {
    /// The wire layer's codes are declared with every other in KontoErrors (`KontoErrorCode.timeout`, …).
    public typealias Code = KontoErrorCode

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
        message: "request deadline exceeded"
    )

    public static func serviceUnavailable(_ reason: String) -> WireError {
        WireError(code: Code.serviceUnavailable, message: reason)
    }

    public static let timeout = WireError(code: Code.timeout, message: "request timed out")

    public static let shuttingDown = WireError(
        code: Code.shuttingDown,
        message: "peer is shutting down"
    )

    public static let overloaded = WireError(
        code: Code.overloaded,
        message: "too many requests in flight on this connection"
    )

    public static let tooManyConnections = WireError(
        code: Code.overloaded,
        message: "too many connections to this server"
    )

    public static let connectionClosed = WireError(
        code: Code.connectionClosed,
        message: "connection closed before a response arrived"
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
