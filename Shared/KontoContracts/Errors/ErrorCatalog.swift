import KontoModel
import KontoWire

/// Every error code a Konto service may answer with, each listed once with its retryable flag and HTTP status.
///
/// Services take the retryable flag from here when they raise an error, the Gateway maps codes to statuses from
/// here, and contracts name the codes of each method from here; a test checks that the three agree.
public enum ErrorCatalog {
    /// The wire layer's own codes (`wire.*`). The retryable ones are an unreachable, busy, late or leaving service:
    /// 503 with `Retry-After`. The others mean a defect between services, never the caller's fault: 500.
    public static let wire: [ErrorCodeInfo] = [
        .init(WireError.Code.frameTooLarge, http: 500),
        .init(WireError.Code.malformedFrame, http: 500),
        .init(WireError.Code.unsupportedVersion, http: 500),
        .init(WireError.Code.authenticationFailed, http: 500),
        .init(WireError.Code.handshakeRequired, http: 500),
        .init(WireError.Code.protocolViolation, http: 500),
        .init(WireError.Code.unknownMethod, http: 500),
        .init(WireError.Code.forbidden, http: 500),
        .init(WireError.Code.badPayload, http: 500),
        .init(WireError.Code.invalidRequest, http: 500),
        .init(WireError.Code.internalError, http: 500),
        .init(WireError.Code.cancelled, http: 500),
        .init(WireError.Code.deadlineExceeded, retryable: true, http: 503),
        .init(WireError.Code.overloaded, retryable: true, http: 503),
        .init(WireError.Code.shuttingDown, retryable: true, http: 503),
        .init(WireError.Code.timeout, retryable: true, http: 503),
        .init(WireError.Code.serviceUnavailable, retryable: true, http: 503),
        .init(WireError.Code.connectionClosed, retryable: true, http: 503),
    ]

    /// The account model's codes (`account.*`), SpeziAccount's errors.
    public static let account: [ErrorCodeInfo] = [
        .init(AccountError.Code.credentialsTaken.rawValue, http: 409),
        .init(AccountError.Code.alreadySignedUp.rawValue, http: 409),
        .init(AccountError.Code.wrongCredentials.rawValue, http: 401),
        .init(AccountError.Code.unauthenticated.rawValue, http: 401),
        .init(AccountError.Code.reauthenticationRequired.rawValue, http: 403),
        .init(AccountError.Code.notFound.rawValue, http: 404),
        .init(AccountError.Code.versionConflict.rawValue, http: 412),
        .init(AccountError.Code.validationFailed.rawValue, http: 422),
        .init(AccountError.Code.accountIdChanged.rawValue, http: 422),
        .init(AccountError.Code.mutatingNonMutableAccountKeys.rawValue, http: 422),
        .init(AccountError.Code.missingAccountValue.rawValue, http: 422),
        .init(AccountError.Code.userIdNotRemovable.rawValue, http: 422),
        // 403, not 400: the request is well formed, the token grants nothing (unknown, used or expired).
        .init(AccountError.Code.invalidResetToken.rawValue, http: 403),
        .init(AccountError.Code.throttled.rawValue, retryable: true, http: 429),
    ]

    /// The Profile service's own codes (`profile.*`).
    public static let profile: [ErrorCodeInfo] = [
        .init(ProfileContract.ErrorCode.alreadyExists, http: 409),
        .init(ProfileContract.ErrorCode.valueTooLarge, http: 422),
        .init(ProfileContract.ErrorCode.accountTooLarge, http: 422),
        .init(ProfileContract.ErrorCode.storageUnavailable, retryable: true, http: 503),
        .init(ProfileContract.ErrorCode.storageFailure, http: 500),
    ]

    /// The Identity service's own codes (`identity.*`).
    public static let identity: [ErrorCodeInfo] = [
        .init(IdentityContract.ErrorCode.busy, retryable: true, http: 503),
        .init(IdentityContract.ErrorCode.storageUnavailable, retryable: true, http: 503),
        .init(IdentityContract.ErrorCode.storageFailure, http: 500),
        .init(IdentityContract.ErrorCode.profileUnavailable, retryable: true, http: 503),
    ]

    /// The Notifications service's own codes (`notifications.*`).
    public static let notifications: [ErrorCodeInfo] = [
        .init(NotificationsContract.ErrorCode.invalidRequest, http: 400),
        .init(NotificationsContract.ErrorCode.unknownGroup, http: 404),
        .init(NotificationsContract.ErrorCode.groupMismatch, http: 409),
        .init(NotificationsContract.ErrorCode.unknownEvent, http: 404),
        .init(NotificationsContract.ErrorCode.storageUnavailable, retryable: true, http: 503),
        .init(NotificationsContract.ErrorCode.storageFailure, http: 500),
    ]

    /// Every code, by code.
    public static let all: [String: ErrorCodeInfo] = Dictionary(
        (wire + account + profile + identity + notifications).map { ($0.code, $0) },
        uniquingKeysWith: { first, _ in first }
    )

    /// A code no service declares (a newer peer, a defect): not retryable, and a 500 at the Gateway.
    public static func info(for code: String) -> ErrorCodeInfo {
        all[code] ?? ErrorCodeInfo(code, http: 500)
    }

    /// Whether `code` is declared retryable.
    public static func isRetryable(_ code: String) -> Bool {
        info(for: code).isRetryable
    }
}
