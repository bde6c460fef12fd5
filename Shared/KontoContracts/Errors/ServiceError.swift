import Foundation
import KontoModel
import KontoWire

/// A refused or failed operation of a service (Identity, Profile, Notifications), with its stable code, whether
/// retrying may help (the code's, unless said otherwise), every refused field and, for throttling, when to retry.
/// The one error the services raise and their callers read back; account-model refusals keep their `account.*` codes.
///
/// Messages and field errors never carry submitted or stored values: a password cannot leak through an error.
public struct ServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    public typealias Code = KontoErrorCode

    public let code: KontoErrorCode
    public let message: String
    /// One entry per refused field, all of them, not just the first.
    public let fields: [AccountFieldError]
    public let isRetryable: Bool
    /// For `account.throttled`: whole seconds until the next attempt may succeed (the gateway's `Retry-After`).
    public let retryAfterSeconds: Int?

    /// - Parameter isRetryable: by default the code's (``KontoErrorCode/isRetryable``).
    public init(code: KontoErrorCode, message: String, fields: [AccountFieldError] = [], isRetryable: Bool? = nil, retryAfterSeconds: Int? = nil) {
        self.code = code
        self.message = message
        self.fields = fields
        self.isRetryable = isRetryable ?? code.isRetryable
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The same refusal under its account-model code.
    public init(_ error: AccountError) {
        self.init(code: error.code, message: error.message, fields: error.fields)
    }

    public var description: String {
        var text = "\(code): \(message)"
        if isRetryable {
            text += " (retryable)"
        }
        if let retryAfterSeconds {
            text += " (retry after \(retryAfterSeconds) s)"
        }
        if !fields.isEmpty {
            text += " [" + fields.map(\.description).joined(separator: "; ") + "]"
        }
        return text
    }
}

/// Service errors cross the wire with code, message and retryable flag; the details carry the field errors and the
/// retry-after seconds: `{"fields":[…],"retryAfter":N}` (each only when present, nothing when neither is).
extension ServiceError: WireErrorConvertible {
    private struct WireDetails: Codable {
        var fields: [AccountFieldError]?
        var retryAfter: Int?
    }

    public var wireErrorCode: KontoErrorCode { code }
    public var wireErrorMessage: String { message }
    public var wireErrorIsRetryable: Bool { isRetryable }

    public var wireErrorDetails: [UInt8] {
        guard !fields.isEmpty || retryAfterSeconds != nil else { return [] }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let details = WireDetails(fields: fields.isEmpty ? nil : fields, retryAfter: retryAfterSeconds)
        return (try? encoder.encode(details)).map(Array.init) ?? []
    }

    /// The error a remote service answered with; nil for the wire layer's own failures (and codes of no family
    /// known here), which callers handle as ``WireError``.
    public init?(_ error: WireError) {
        switch error.code.family {
        case .wire, .unknown, .request, .gateway: return nil
        case .account, .identity, .admin, .profile, .notifications: break
        }
        let details = error.details.isEmpty ? nil : try? JSONDecoder().decode(WireDetails.self, from: Data(error.details))
        self.init(code: error.code, message: error.message, fields: details?.fields ?? [], isRetryable: error.isRetryable, retryAfterSeconds: details?.retryAfter)
    }
}

// MARK: Each service's standard errors

extension ServiceError {
    public static let identityBusy = ServiceError(code: .identityBusy, message: "The service is busy; try again shortly.")
    public static let identityStorageUnavailable = ServiceError(code: .identityStorageUnavailable, message: "Account storage is unavailable; try again shortly.")
    public static let identityStorageFailure = ServiceError(code: .identityStorageFailure, message: "Account storage failed.")
    public static let identityProfileUnavailable = ServiceError(
        code: .identityProfileUnavailable,
        message: "Account details are unavailable; nothing was changed, try again shortly."
    )
    public static let identityProviderUnavailable = ServiceError(
        code: .identityProviderUnavailable,
        message: "The identity provider could not be reached; nothing was changed, try again shortly."
    )

    /// Too many failed attempts; retry after `seconds`.
    public static func throttled(retryAfterSeconds seconds: Int) -> ServiceError {
        let error = AccountError(code: .throttled)
        return ServiceError(code: error.code, message: error.message, retryAfterSeconds: seconds)
    }

    public static func notFound() -> ServiceError {
        ServiceError(AccountError(code: .notFound))
    }

    public static func versionConflict(retryable: Bool = false, message: String? = nil) -> ServiceError {
        ServiceError(code: .versionConflict, message: message ?? AccountError(code: .versionConflict).message, isRetryable: retryable)
    }

    public static let profileAlreadyExists = ServiceError(code: .profileAlreadyExists, message: "The account already has details.")
    public static let profileStorageUnavailable = ServiceError(code: .profileStorageUnavailable, message: "The profile storage is unavailable; try again later.")
    public static let profileStorageFailure = ServiceError(code: .profileStorageFailure, message: "The profile storage failed.")

    public static func notificationsInvalidRequest(_ message: String) -> ServiceError {
        ServiceError(code: .notificationsInvalidRequest, message: message)
    }

    public static func unknownGroup(_ group: String) -> ServiceError {
        ServiceError(code: .notificationsUnknownGroup, message: "no consumer group '\(group)'")
    }

    /// A caller reached for an event type or a consumer group that belongs to another service (`wire.forbidden`).
    public static func notificationsForbidden(_ message: String) -> ServiceError {
        ServiceError(code: WireError.Code.forbidden, message: message)
    }

    public static func groupMismatch(_ group: String) -> ServiceError {
        ServiceError(code: .notificationsGroupMismatch, message: "consumer group '\(group)' receives other event types")
    }

    public static func webhookExists(_ name: String) -> ServiceError {
        ServiceError(code: .notificationsWebhookExists, message: "a webhook endpoint named '\(name)' exists already")
    }

    public static func unknownWebhook(_ name: String) -> ServiceError {
        ServiceError(code: .notificationsUnknownWebhook, message: "no webhook endpoint named '\(name)'")
    }

    public static func webhookInFile(_ name: String) -> ServiceError {
        ServiceError(code: .notificationsWebhookInFile, message: "webhook endpoint '\(name)' is the deployment's file's (KONTO_NOTIFICATIONS_WEBHOOKS): change it there")
    }

    public static func webhookLimit(_ limit: Int) -> ServiceError {
        ServiceError(code: .notificationsWebhookLimit, message: "\(limit) webhook endpoints are stored, as many as this deployment allows (KONTO_NOTIFICATIONS_WEBHOOKS_MAX): remove one first")
    }

    public static let unknownEvent = ServiceError(code: .notificationsUnknownEvent, message: "no such event for this account")
    public static let notificationsStorageUnavailable = ServiceError(code: .notificationsStorageUnavailable, message: "event storage unavailable")
    public static let notificationsStorageFailure = ServiceError(code: .notificationsStorageFailure, message: "event storage failed")
}
