import KontoWire

/// A refused or failed Notifications operation, with a stable code and whether retrying may help (the code's). Messages name what was wrong with a request, never an event's contents.
public struct NotificationsError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: KontoErrorCode
    public let message: String
    public let isRetryable: Bool

    public init(code: KontoErrorCode, message: String) {
        self.code = code
        self.message = message
        self.isRetryable = code.isRetryable
    }

    /// A Notifications error read back from the wire; nil for another service's or the wire layer's code.
    public init?(_ error: WireError) {
        guard error.code.family == .notifications else { return nil }
        self.init(code: error.code, message: error.message)
    }

    public var description: String {
        isRetryable ? "\(code): \(message) (retryable)" : "\(code): \(message)"
    }

    public static func invalidRequest(_ message: String) -> NotificationsError {
        NotificationsError(code: KontoErrorCode.notificationsInvalidRequest, message: message)
    }

    public static func unknownGroup(_ group: String) -> NotificationsError {
        NotificationsError(code: KontoErrorCode.notificationsUnknownGroup, message: "no consumer group '\(group)'")
    }

    public static func groupMismatch(_ group: String) -> NotificationsError {
        NotificationsError(code: KontoErrorCode.notificationsGroupMismatch, message: "consumer group '\(group)' receives other event types")
    }

    public static let unknownEvent = NotificationsError(code: KontoErrorCode.notificationsUnknownEvent, message: "no such event for this account")
    public static let storageUnavailable = NotificationsError(code: KontoErrorCode.notificationsStorageUnavailable, message: "event storage unavailable")
    public static let storageFailure = NotificationsError(code: KontoErrorCode.notificationsStorageFailure, message: "event storage failed")
}

extension NotificationsError: WireErrorConvertible {
    public var wireErrorCode: KontoErrorCode { code }
    public var wireErrorMessage: String { message }
    public var wireErrorIsRetryable: Bool { isRetryable }
}
