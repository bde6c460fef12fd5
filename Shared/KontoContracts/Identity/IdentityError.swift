import Foundation
import KontoModel
import KontoWire

/// A refused or failed Identity operation, with a stable code and whether retrying may help (the code's, unless
/// said otherwise).
/// Messages and field errors never carry submitted values: a password cannot leak through an error.
public struct IdentityError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: KontoErrorCode
    public let message: String
    public let fields: [AccountFieldError]
    public let isRetryable: Bool
    /// For `account.throttled`: whole seconds until the next attempt may succeed (the Gateway's `Retry-After`).
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

    public static let busy = IdentityError(code: KontoErrorCode.identityBusy, message: "The service is busy; try again shortly.")
    public static let storageUnavailable = IdentityError(
        code: KontoErrorCode.identityStorageUnavailable,
        message: "Account storage is unavailable; try again shortly."
    )
    public static let storageFailure = IdentityError(code: KontoErrorCode.identityStorageFailure, message: "Account storage failed.")
    public static let profileUnavailable = IdentityError(
        code: KontoErrorCode.identityProfileUnavailable,
        message: "Account details are unavailable; nothing was changed, try again shortly."
    )

    /// Too many failed attempts; retry after `seconds`.
    public static func throttled(retryAfterSeconds seconds: Int) -> IdentityError {
        IdentityError(AccountError(code: .throttled)).withRetryAfter(seconds)
    }

    private func withRetryAfter(_ seconds: Int) -> IdentityError {
        IdentityError(code: code, message: message, fields: fields, isRetryable: isRetryable, retryAfterSeconds: seconds)
    }
}

/// Identity errors cross the wire with code, message and retryable flag; the details carry the field errors and the
/// retry-after seconds: `{"fields":[…],"retryAfter":N}` (each only when present).
extension IdentityError: WireErrorConvertible {
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

    /// The Identity (or account) error a remote Identity service answered with; nil for other families (`wire.*`),
    /// which callers handle as ``WireError``.
    public init?(_ error: WireError) {
        guard error.code.family == .identity || error.code.family == .account else { return nil }
        let details = error.details.isEmpty ? nil : try? JSONDecoder().decode(WireDetails.self, from: Data(error.details))
        self.init(
            code: error.code,
            message: error.message,
            fields: details?.fields ?? [],
            isRetryable: error.isRetryable,
            retryAfterSeconds: details?.retryAfter
        )
    }
}
