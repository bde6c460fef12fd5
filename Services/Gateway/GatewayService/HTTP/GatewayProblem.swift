import Foundation
import HTTPTypes
import NIOHTTP1
import KontoContracts
import KontoErrors
import KontoModel
import KontoWire

/// A refused or failed HTTP request, rendered as `application/problem+json` (RFC 9457) with Konto's stable `code`.
///
/// Handlers throw it; ``ProblemMiddleware`` renders it. `detail` and the field errors never carry submitted values.
public struct GatewayProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var code: KontoErrorCode
    public var title: String
    public var detail: String?
    public var fields: [AccountFieldError]
    /// Seconds, for `Retry-After` (throttling, an unavailable service).
    public var retryAfter: Int?
    /// Extra response headers (e.g. `WWW-Authenticate`).
    public var headers: HTTPFields

    public init(
        status: HTTPResponse.Status,
        code: KontoErrorCode,
        title: String? = nil,
        detail: String? = nil,
        fields: [AccountFieldError] = [],
        retryAfter: Int? = nil,
        headers: HTTPFields = [:]
    ) {
        self.status = status
        self.code = code
        self.title = title ?? Self.title(for: status)
        self.detail = detail
        self.fields = fields
        self.retryAfter = retryAfter
        self.headers = headers
    }

    /// The reason phrase of the status line the server writes for `status` (NIO's, whatever phrase the status was made
    /// with: "Unprocessable Entity", "Payload Too Large"), so a problem's title and its status line say the same.
    static func title(for status: HTTPResponse.Status) -> String {
        HTTPResponseStatus(statusCode: status.code).reasonPhrase
    }

    public var description: String {
        "\(status.code) \(code)" + (detail.map { ": \($0)" } ?? "")
    }

    static func malformed(_ detail: String) -> GatewayProblem {
        GatewayProblem(status: .badRequest, code: .requestMalformed, detail: detail)
    }

    static let unauthenticated = GatewayProblem(
        status: .unauthorized,
        code: .unauthenticated,
        detail: AccountError(code: .unauthenticated).message,
        headers: [.wwwAuthenticate: "Bearer"]
    )

    static func unavailable(_ service: String) -> GatewayProblem {
        GatewayProblem(
            status: .serviceUnavailable,
            code: .gatewayServiceUnavailable,
            detail: "The \(service) service is unavailable or late; try again shortly.",
            retryAfter: 1
        )
    }

    /// What a service's error means for the HTTP caller: the account model's and the services' codes keep their
    /// code and get their status from the gateway's table (``KontoErrorCode/httpStatus``); retryable failures (the
    /// service down, busy or late) are 503 with `Retry-After`.
    init(upstream error: WireError, service: String) {
        if error.code.family == .wire {
            // The wire's own failures: whether the service could be reached, not what it answered.
            self = error.isRetryable || error.code.isRetryable
                ? .unavailable(service)
                : GatewayProblem(status: .internalServerError, code: .gatewayUpstreamFailed, detail: "The \(service) service failed.")
            return
        }
        let identity = ServiceError(error)
        let status = error.code.httpStatus
        var retryAfter = identity?.retryAfterSeconds
        if status == .serviceUnavailable, retryAfter == nil {
            retryAfter = 1
        }
        self.init(
            status: status,
            code: error.code,
            detail: error.message,
            fields: identity?.fields ?? AccountFieldError.fields(fromWireDetails: error.details),
            retryAfter: retryAfter,
            headers: error.code == .unauthenticated ? [.wwwAuthenticate: "Bearer"] : [:]
        )
    }

    init(_ error: AccountError) {
        self.init(status: error.code.httpStatus, code: error.code, detail: error.message, fields: error.fields)
    }
}
