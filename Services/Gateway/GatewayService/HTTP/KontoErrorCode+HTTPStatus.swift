import HTTPTypes
import KontoErrors

/// What each code means over HTTP: the gateway's alone (the services and their contracts know nothing of HTTP).
extension KontoErrorCode {
    /// The status of the gateway's `application/problem+json` answer with this code. A code no one here declares (a
    /// newer service's) is a 500.
    public var httpStatus: HTTPResponse.Status {
        Self.httpStatuses[self] ?? .internalServerError
    }

    /// Every declared code's status (a test checks that none is missing).
    public static let httpStatuses: [KontoErrorCode: HTTPResponse.Status] = [
        // The wire's own: a defect between services (500), or a service unreachable, busy, late or leaving (503,
        // with Retry-After; see GatewayProblem(upstream:service:)).
        .frameTooLarge: .internalServerError,
        .malformedFrame: .internalServerError,
        .unsupportedVersion: .internalServerError,
        .authenticationFailed: .internalServerError,
        .serverAuthenticationFailed: .internalServerError,
        .handshakeRequired: .internalServerError,
        .protocolViolation: .internalServerError,
        .unknownMethod: .internalServerError,
        .forbidden: .internalServerError,
        .badPayload: .internalServerError,
        .invalidRequest: .internalServerError,
        .internalError: .internalServerError,
        .cancelled: .internalServerError,
        .deadlineExceeded: .serviceUnavailable,
        .overloaded: .serviceUnavailable,
        .shuttingDown: .serviceUnavailable,
        .timeout: .serviceUnavailable,
        .serviceUnavailable: .serviceUnavailable,
        .connectionClosed: .serviceUnavailable,
        // The account model's.
        .credentialsTaken: .conflict,
        .alreadySignedUp: .conflict,
        .wrongCredentials: .unauthorized,
        .unauthenticated: .unauthorized,
        .reauthenticationRequired: .forbidden,
        .notFound: .notFound,
        .versionConflict: .preconditionFailed,
        .validationFailed: .unprocessableContent,
        .accountIdChanged: .unprocessableContent,
        .mutatingNonMutableAccountKeys: .unprocessableContent,
        .missingAccountValue: .unprocessableContent,
        .userIdNotRemovable: .unprocessableContent,
        // 403, not 400: the request is well formed, the token grants nothing (unknown, used or expired).
        .invalidResetToken: .forbidden,
        .invalidVerificationToken: .forbidden,
        .emailNotVerified: .forbidden,
        .secondFactorRequired: .forbidden,
        .invalidChallenge: .unauthorized,
        .wrongSecondFactor: .unauthorized,
        // 403: well formed and authenticated by the challenge, but the factor grants nothing until recovered.
        .factorLocked: .forbidden,
        .factorNotFound: .notFound,
        .sessionNotFound: .notFound,
        .invalidIdentityToken: .unauthorized,
        .identityNotFound: .notFound,
        .applicationNotFound: .notFound,
        .lastSignInMethod: .conflict,
        .throttled: .tooManyRequests,
        // The services' own.
        .identityBusy: .serviceUnavailable,
        .identityStorageUnavailable: .serviceUnavailable,
        .identityStorageFailure: .internalServerError,
        .identityProfileUnavailable: .serviceUnavailable,
        .identityProviderUnavailable: .serviceUnavailable,
        .adminKeyRefused: .unauthorized,
        .adminScopeMissing: .forbidden,
        .adminKeyNotFound: .notFound,
        .adminSessionNotFound: .notFound,
        .adminInvalidRequest: .unprocessableContent,
        .adminClientNotFound: .notFound,
        .adminClientExists: .conflict,
        .adminClientInFile: .conflict,
        .adminClientLimit: .conflict,
        .adminLastKeyManager: .conflict,
        .profileAlreadyExists: .conflict,
        .profileValueTooLarge: .unprocessableContent,
        .profileAccountTooLarge: .unprocessableContent,
        .profileStorageUnavailable: .serviceUnavailable,
        .profileStorageFailure: .internalServerError,
        .notificationsInvalidRequest: .badRequest,
        .notificationsUnknownGroup: .notFound,
        .notificationsGroupMismatch: .conflict,
        .notificationsUnknownEvent: .notFound,
        .notificationsWebhookExists: .conflict,
        .notificationsUnknownWebhook: .notFound,
        .notificationsWebhookInFile: .conflict,
        .notificationsWebhookLimit: .conflict,
        .notificationsStorageUnavailable: .serviceUnavailable,
        .notificationsStorageFailure: .internalServerError,
        // The gateway's own.
        .requestMalformed: .badRequest,
        .requestUnsupportedMediaType: .unsupportedMediaType,
        .requestBodyTooLarge: .contentTooLarge,
        .requestNotFound: .notFound,
        .requestMethodNotAllowed: .methodNotAllowed,
        .requestRateLimited: .tooManyRequests,
        .requestPreconditionFailed: .preconditionFailed,
        .requestInsufficientScope: .forbidden,
        .gatewayServiceUnavailable: .serviceUnavailable,
        .gatewayUpstreamFailed: .internalServerError,
        .gatewayInternalError: .internalServerError,
    ]
}
